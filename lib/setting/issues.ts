// Validation errors as an operator reads them: the JSON path of the bad member in the form
// `hosting[2].origin.address[0]` and a message naming what was expected.
import type { Validator } from 'typebox/compile';
import type { TLocalizedValidationError } from 'typebox/error';
import { Settings } from 'typebox/system';
import { FORMAT_MESSAGES } from './schema/formats.js';
import type { ErrorCode } from '../errors/codes.js';

export interface SettingIssue { path: string; message: string }

/**
 * A subclass, not a bare code of lib/errors/codes.ts: it carries every issue with its JSON path,
 * which the upload answer, the command line and the tests read one by one.
 */
export class SettingError extends Error {
  readonly code = 'SETTING_INVALID' satisfies ErrorCode;
  constructor(public issues: SettingIssue[]) {
    super(issues.map(formatIssue).join('\n'));
    this.name = 'SettingError';
  }
}

export function formatIssue(i: SettingIssue): string {
  return i.path === '' ? i.message : `${i.path}: ${i.message}`;
}

/** Appends a member name or an array index to a path. */
export function joinPath(base: string, key: string | number): string {
  if (typeof key === 'number') return `${base}[${key}]`;
  return base === '' ? key : `${base}.${key}`;
}

export function jsonType(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

type Json = Record<string, unknown>;

function unescapePointer(seg: string): string {
  return seg.replace(/~1/g, '/').replace(/~0/g, '~');
}

/** Our path of a JSON pointer into `value` (array members become [i]), and the value there. */
function locate(value: unknown, pointer: string, base: string): { path: string; value: unknown } {
  let path = base;
  let cur = value;
  if (pointer === '') return { path, value: cur };
  for (const raw of pointer.slice(1).split('/')) {
    const seg = unescapePointer(raw);
    if (Array.isArray(cur)) {
      path = joinPath(path, Number(seg));
      cur = cur[Number(seg)];
    } else {
      path = joinPath(path, seg);
      cur = typeof cur === 'object' && cur !== null ? (cur as Json)[seg] : undefined;
    }
  }
  return { path, value: cur };
}

function schemaAt(root: unknown, schemaPath: string): Json | undefined {
  let cur = root;
  for (const raw of schemaPath.replace(/^#\/?/, '').split('/').filter((s) => s !== '')) {
    if (typeof cur !== 'object' || cur === null) return undefined;
    cur = (cur as Json)[unescapePointer(raw)];
  }
  return typeof cur === 'object' && cur !== null ? (cur as Json) : undefined;
}

function matchesType(schema: Json, v: unknown): boolean {
  const t = jsonType(v);
  const types = Array.isArray(schema.type) ? schema.type : schema.type === undefined ? [] : [schema.type];
  return types.some((s) => s === t || (s === 'number' && t === 'integer'));
}

/** "string or null", `"rr" or "hash"`: what a union accepts. */
function describe(schema: Json | undefined): string {
  if (schema === undefined) return 'a different value';
  if ('const' in schema) return JSON.stringify(schema.const);
  if (Array.isArray(schema.enum)) return schema.enum.map((v) => JSON.stringify(v)).join(' or ');
  if (Array.isArray(schema.anyOf)) return schema.anyOf.map((s) => describe(s as Json)).join(' or ');
  if (schema.type !== undefined) return Array.isArray(schema.type) ? schema.type.join(' or ') : String(schema.type);
  return 'a different value';
}

function shown(v: unknown): string {
  const s = JSON.stringify(v);
  return s !== undefined && s.length > 60 ? `${s.slice(0, 57)}...` : String(s);
}

/** Drops the errors of union alternatives that are not the one the value meant. */
function pruneUnions(errors: TLocalizedValidationError[], schema: unknown, value: unknown): Set<number> {
  const dropped = new Set<number>();
  const unions = errors
    .map((e, i) => ({ e, i }))
    .filter(({ e }) => e.keyword === 'anyOf')
    .sort((a, b) => a.e.schemaPath.length - b.e.schemaPath.length);
  for (const { e, i } of unions) {
    if (dropped.has(i)) continue;
    const prefix = `${e.schemaPath}/anyOf/`;
    const union = schemaAt(schema, e.schemaPath);
    const at = locate(value, e.instancePath, '').value;
    const variants = Array.isArray(union?.anyOf) ? (union.anyOf as Json[]) : [];
    const fitting = variants.map((v, k) => ({ v, k })).filter(({ v }) => matchesType(v, at));
    // The value has the type of exactly one alternative: report why it fails that one.
    const keep = fitting.length === 1 && !('const' in fitting[0]!.v) ? `${prefix}${fitting[0]!.k}` : undefined;
    const under = (o: TLocalizedValidationError): boolean =>
      o.schemaPath.startsWith(prefix) && (o.instancePath === e.instancePath || o.instancePath.startsWith(`${e.instancePath}/`));
    errors.forEach((o, j) => {
      if (!under(o)) return;
      if (keep !== undefined && (o.schemaPath === keep || o.schemaPath.startsWith(`${keep}/`))) return;
      dropped.add(j);
    });
    if (keep !== undefined) dropped.add(i);
  }
  return dropped;
}

function toIssues(e: TLocalizedValidationError, schema: unknown, value: unknown, base: string): SettingIssue[] {
  const { path, value: at } = locate(value, e.instancePath, base);
  const p = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'additionalProperties':
      return (p.additionalProperties as string[]).map((k) => ({ path: joinPath(path, k), message: 'unknown field' }));
    case 'required':
      return (p.requiredProperties as string[]).map((k) => ({ path: joinPath(path, k), message: 'required field missing' }));
    case 'type':
      return [{ path, message: `must be ${String(p.type)}, got ${jsonType(at)}` }];
    case 'enum':
      return [{ path, message: `must be one of ${(p.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}, got ${shown(at)}` }];
    case 'const':
      return [{ path, message: `must be ${JSON.stringify(p.allowedValue)}, got ${shown(at)}` }];
    case 'anyOf':
      return [{ path, message: `must be ${describe(schemaAt(schema, e.schemaPath))}, got ${jsonType(at) === 'string' ? shown(at) : jsonType(at)}` }];
    case 'format':
      return [{ path, message: `${FORMAT_MESSAGES[p.format as string] ?? e.message}, got ${shown(at)}` }];
    case 'boolean':
      // `additionalProperties: false` reports each member twice; the additionalProperties error names them.
      if (e.schemaPath.endsWith('/additionalProperties')) return [];
      return [{ path, message: 'not allowed' }];
    default:
      return [{ path, message: e.message }];
  }
}

/** Every error of `value` against the validator, with paths under `base`. */
export function collect(validator: Validator, value: unknown, base: string): SettingIssue[] {
  // typebox stops collecting at maxErrors (8 by default, a process-wide setting); an operator
  // wants every error of the file at once.
  const previous = Settings.Get().maxErrors;
  Settings.Set({ maxErrors: 10_000 });
  let errors: TLocalizedValidationError[];
  try {
    errors = validator.Errors(value);
  } finally {
    Settings.Set({ maxErrors: previous });
  }
  const schema = validator.Type();
  const dropped = pruneUnions(errors, schema, value);
  const seen = new Set<string>();
  const out: SettingIssue[] = [];
  errors.forEach((e, i) => {
    if (dropped.has(i)) return;
    for (const issue of toIssues(e, schema, value, base)) {
      const key = `${issue.path}\u0000${issue.message}`;
      if (seen.has(key)) continue;
      seen.add(key);
      out.push(issue);
    }
  });
  return out;
}
