// The one merge rule of setting.json, used for host functions over global functions and for a
// host over its basehost: objects merge member by member, the overriding side wins; arrays,
// scalars and null replace whole.

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A new value: `over` merged onto `base`. Neither argument is modified. */
export function deepMerge<T>(base: T, over: unknown): T {
  if (over === undefined) return structuredClone(base);
  if (!isPlainObject(base) || !isPlainObject(over)) return structuredClone(over) as T;
  const out: Record<string, unknown> = structuredClone(base);
  for (const [k, v] of Object.entries(over)) {
    if (v === undefined) continue;
    out[k] = k in out ? deepMerge(out[k], v) : structuredClone(v);
  }
  return out as T;
}
