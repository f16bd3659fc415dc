// Host-level `functions` and a host before its basehost is applied are partial: a member the
// host does not write must stay absent (so the base or the global value shows through), not be
// filled with a default. These transforms derive that partial JSON schema from the full one, so
// the two never drift apart.

type Json = Record<string, unknown>;

/** The static type of such a partial schema: every member optional, arrays whole. */
export type DeepPartial<T> = T extends readonly (infer _)[]
  ? T
  : T extends object
    ? { [K in keyof T]?: DeepPartial<T[K]> }
    : T;

function isObj(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function strip(schema: unknown): unknown {
  if (!isObj(schema)) return schema;
  const out: Json = {};
  for (const [k, v] of Object.entries(schema)) {
    if (k === 'default') continue;
    if ((k === 'properties' || k === 'patternProperties' || k === '$defs') && isObj(v)) {
      out[k] = Object.fromEntries(Object.entries(v).map(([name, s]) => [name, strip(s)]));
    } else if ((k === 'anyOf' || k === 'oneOf' || k === 'allOf' || k === 'prefixItems') && Array.isArray(v)) {
      out[k] = v.map(strip);
    } else if (k === 'items' || k === 'additionalProperties' || k === 'not') {
      out[k] = strip(v);
    } else {
      out[k] = v;
    }
  }
  // A member that had a default is no longer required: its absence means "not overridden".
  const props = schema.properties;
  if (Array.isArray(schema.required) && isObj(props)) {
    out.required = schema.required.filter((name) => !(isObj(props[name]) && 'default' in (props[name] as Json)));
  }
  return out;
}

/** A plain JSON schema equal to `schema` without defaults, where defaulted members are optional. */
export function withoutDefaults(schema: object): Json {
  return strip(JSON.parse(JSON.stringify(schema))) as Json;
}

/** A copy of an object schema in which the given members are optional. */
export function withOptional(schema: Json, names: string[]): Json {
  const required = Array.isArray(schema.required) ? schema.required.filter((n) => !names.includes(n as string)) : [];
  return { ...schema, required };
}
