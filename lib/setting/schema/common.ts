// Building blocks shared by the schema files. Every object is closed (unknown members are
// refused) unless it is declared loose; a member with a default is required in the schema,
// because validation runs after the defaults are applied, and the static type then shows it as
// always present.
import { Type, type TProperties, type TSchema } from 'typebox';
import './formats.js';

type Opts = { description?: string; default?: unknown };

/** A closed object. */
export function Obj<P extends TProperties>(props: P, opts: Opts = {}) {
  return Type.Object(props, { additionalProperties: false, ...opts });
}

/** A closed object that defaults to `{}`, so its own members' defaults fill in when it is absent. */
export function Section<P extends TProperties>(props: P, description?: string) {
  return Type.Object(props, { additionalProperties: false, default: {}, ...(description === undefined ? {} : { description }) });
}

/** An object whose members the server does not know (yet); any member is allowed. */
export function Loose(description?: string) {
  return Type.Record(Type.String(), Type.Unknown(), description === undefined ? {} : { description });
}

export const Str = (opts: Opts & { minLength?: number } = {}) => Type.String(opts);
export const Bool = (def: boolean, description?: string) => Type.Boolean({ default: def, ...(description === undefined ? {} : { description }) });
export const Int = (def: number, opts: { minimum?: number; maximum?: number; description?: string } = {}) =>
  Type.Integer({ default: def, ...opts });
export const Num = (def: number, opts: { minimum?: number; maximum?: number; description?: string } = {}) =>
  Type.Number({ default: def, ...opts });
/** Seconds, a non-negative number. */
export const Secs = (def: number, description?: string) =>
  Type.Number({ default: def, minimum: 0, ...(description === undefined ? {} : { description }) });
/** A string that defaults to null. */
export const NullStr = (opts: { format?: string; description?: string } = {}) =>
  Type.Union([Type.String(opts.format === undefined ? {} : { format: opts.format }), Type.Null()], {
    default: null,
    ...(opts.description === undefined ? {} : { description: opts.description }),
  });
/** One of a fixed set of strings. */
export function OneOf<const V extends string[]>(values: readonly [...V], def?: V[number], description?: string) {
  return Type.Enum(values, {
    ...(def === undefined ? {} : { default: def }),
    ...(description === undefined ? {} : { description }),
  });
}
export const Formatted = (format: string, opts: Opts = {}) => Type.String({ format, ...opts });
export const Size = (def: string, description?: string) =>
  Type.String({ format: 'svc-size', default: def, ...(description === undefined ? {} : { description }) });
/** An array that defaults to `[]`. */
export const List = <T extends TSchema>(items: T, opts: { maxItems?: number; description?: string } = {}) =>
  Type.Array(items, { default: [], ...opts });
export const Opt = Type.Optional;

/** Log rolling: by clock period (minutes, at most a day) and/or by size (MB). */
export const Rolling = () =>
  Section({
    time: Opt(Type.Integer({ minimum: 1, maximum: 1440, description: 'minutes; rolls at each multiple of the period on the clock' })),
    size: Opt(Type.Integer({ minimum: 1, description: 'MB' })),
  });
