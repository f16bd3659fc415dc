// The whole setting.json schema and its compiled validators.
//
// Validation runs in two shapes: the top level (meta, env, functions) with its defaults applied
// first, and each hosting[] entry on its own, partial until its basehost is applied (see
// ../hosts.ts). `SettingSchema` is the shape after all of that, the source of the static types.
import { Type, type Static } from 'typebox';
import { Compile } from 'typebox/compile';
import { Obj, Opt } from './common.js';
import { EnvSchema } from './env.js';
import { FunctionsSchema } from './functions.js';
import { hostSchema } from './hosting.js';
import { MetaSchema } from './meta.js';
import { withOptional, withoutDefaults, type DeepPartial } from './partial.js';

export { FunctionsSchema } from './functions.js';

/** A host's own functions: any subset of the global functions, without defaults. */
const HostFunctionsSchema = Type.Unsafe<DeepPartial<Static<typeof FunctionsSchema>>>(withoutDefaults(FunctionsSchema));

/** A host entry as the server runs it: basehost applied, host defaults filled. */
export const HostSchema = hostSchema(HostFunctionsSchema);

/** A host entry as written, before its basehost is applied. */
const HostInputSchema = withoutDefaults(HostSchema);

/** A host file named by mode.basehost: a host object whose name is optional (it is not copied). */
const HostFileSchema = withOptional(HostInputSchema, ['name']);

export const TopSchema = Obj({
  meta: MetaSchema,
  env: EnvSchema,
  functions: FunctionsSchema,
  hosting: Opt(Type.Unknown()),
});

export const SettingSchema = Obj({
  meta: MetaSchema,
  env: EnvSchema,
  functions: FunctionsSchema,
  hosting: Type.Array(HostSchema, { description: 'virtual hosts' }),
}, { description: 'setting.json' });

export const validators = {
  top: Compile(TopSchema),
  host: Compile(HostSchema),
  hostInput: Compile(HostInputSchema),
  hostFile: Compile(HostFileSchema),
};
