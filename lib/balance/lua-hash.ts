// balance.luaPath: an operator's Lua script that decides which worker owns a URL in hash balance.
//
// Contract of the script (Lua 5.3 through fengari, whose integers are 32-bit): it defines a global
// function `hash(key)` taking the same key the built-in hashing uses (host + URL, cut at the first
// urlIgnoreList match) and returning an integer. The integer, taken as unsigned 32-bit, is a point
// on the ring of live workers (HashRing.ownerOfHash): the owner is the worker with the first point
// at or after it. Write constants in hex; `x & 0xffffffff` arithmetic wraps as in C.
//
// The script is loaded once per setting (start-up, reload), never per request; a script that does
// not compile, has no `hash` function, or whose `hash` fails on a probe key is refused with a
// LUA_HASH_INVALID (lib/errors/codes.ts) naming the file. A runtime failure on a real key gives -1 and the caller falls back
// to the built-in hash, so a script bug never fails a client.
import { readFileSync } from 'node:fs';
import { codedError } from '../errors/codes.js';
import { createRequire } from 'node:module';

/** The part of fengari's C-like API used here (the package ships no types). */
interface LuaState { readonly __lua_state: unique symbol }
interface FengariApi {
  lua: {
    LUA_OK: number; LUA_REGISTRYINDEX: number; LUA_TFUNCTION: number;
    lua_getglobal(L: LuaState, name: Uint8Array): number;
    lua_pcall(L: LuaState, nargs: number, nresults: number, msgh: number): number;
    lua_pushstring(L: LuaState, s: Uint8Array): void;
    lua_rawgeti(L: LuaState, idx: number, n: number): number;
    lua_tointegerx(L: LuaState, idx: number, isnum: null): number | false;
    lua_isinteger(L: LuaState, idx: number): boolean;
    lua_tojsstring(L: LuaState, idx: number): string;
    lua_settop(L: LuaState, idx: number): void;
  };
  lauxlib: {
    luaL_newstate(): LuaState;
    luaL_loadbuffer(L: LuaState, buf: Uint8Array, size: number | null, name: Uint8Array): number;
    luaL_ref(L: LuaState, t: number): number;
  };
  lualib: { luaL_openlibs(L: LuaState): void };
  to_luastring(s: string): Uint8Array;
}

/**
 * fengari (with its own dependencies, readline-sync among them), loaded by the first script: a
 * setting without balance.luaPath, the usual one, never loads it (about 2.5 MB of heap less in
 * every RT worker).
 */
let fengari: FengariApi | undefined;

/** Hash of a key as an unsigned 32-bit ring point, or -1 when the script failed on it. */
export type LuaHash = (key: string) => number;

export function loadLuaHash(file: string, source = readFileSync(file, 'utf8')): LuaHash {
  const { lua, lauxlib, lualib, to_luastring } = fengari ??= createRequire(import.meta.url)('fengari') as FengariApi;
  const L = lauxlib.luaL_newstate();
  lualib.luaL_openlibs(L);
  if (lauxlib.luaL_loadbuffer(L, to_luastring(source), null, to_luastring(`@${file}`)) !== lua.LUA_OK ||
    lua.lua_pcall(L, 0, 0, 0) !== lua.LUA_OK) {
    throw codedError('LUA_HASH_INVALID', file, lua.lua_tojsstring(L, -1));
  }
  if (lua.lua_getglobal(L, to_luastring('hash')) !== lua.LUA_TFUNCTION) {
    throw codedError('LUA_HASH_INVALID', file, 'the script defines no function hash(key)');
  }
  // Kept in the registry: a script cannot break dispatch by reassigning the global later.
  const ref = lauxlib.luaL_ref(L, lua.LUA_REGISTRYINDEX);
  let lastError = '';
  const hash: LuaHash = (key) => {
    lua.lua_rawgeti(L, lua.LUA_REGISTRYINDEX, ref);
    lua.lua_pushstring(L, to_luastring(key));
    if (lua.lua_pcall(L, 1, 1, 0) !== lua.LUA_OK) {
      lastError = lua.lua_tojsstring(L, -1);
      lua.lua_settop(L, 0);
      return -1;
    }
    const n = lua.lua_isinteger(L, -1) ? lua.lua_tointegerx(L, -1, null) : false;
    lua.lua_settop(L, 0);
    if (n === false) { lastError = 'hash(key) did not return an integer'; return -1; }
    return n >>> 0;
  };
  if (hash('probe/') < 0) throw codedError('LUA_HASH_INVALID', file, `hash("probe/") failed: ${lastError}`);
  return hash;
}
