// The request rules of `functions.network` that document 2 cites without fields (bypass, modify,
// cachingKey). Their shape follows what an operator of STON / nginx / Varnish expects; README
// ("Request rules") has examples. Patterns use the condition language of urlRewrites.
import { Bool, Int, List, Obj, OneOf, Opt, Section, Str } from './common.js';

const HEADER_EDIT_MODES = ['set', 'add', 'append', 'unset', 'rewrite'] as const;

const HeaderEdit = Obj({
  key: Str({ minLength: 1, description: 'header field name' }),
  value: Str({ default: '', description: 'the value (set, add, append); rewrite: the replacement, #0..#9 the captures of match' }),
  mode: OneOf([...HEADER_EDIT_MODES], 'set',
    'set: replace or create; add: one more field line; append: add ", value" to the field (create it when absent); unset: remove; rewrite: replace what match finds'),
  match: Opt(Str({ minLength: 1, description: 'rewrite only: regular expression searched in the value' })),
});

const ModifyEntry = Obj({
  pattern: Opt(Str({ description: 'conditions joined by & (URL, URLMATCH, HEADER, METHOD, PROTOCOL); absent: every request' })),
  caseSensitive: Bool(true, 'case-sensitive matching of the pattern'),
  headers: List(HeaderEdit, { description: 'request header edits' }),
  responseHeaders: List(HeaderEdit, { description: 'response header edits' }),
});

/** `functions.network.http.frontEnd.modify` and `backEnd.modify`: the same shape, other sides. */
export const Modify = (description: string) => Section({ matchingList: List(ModifyEntry) }, description);

export const Bypass = Section({
  postMethod: Section({ enable: Bool(true, 'POST requests go to the origin without the cache') }),
  noCacheRequest: Section({
    enable: Bool(false, 'a request with Cache-Control: no-cache (or Pragma: no-cache) goes to the origin and its answer is not stored'),
  }),
  matchingList: List(Obj({
    pattern: Str({ minLength: 1, description: 'conditions joined by &' }),
    caseSensitive: Bool(true),
    instant: Bool(false, 'the origin answer reaches the client with every field (Set-Cookie and custom fields usable by fallbacks); logged Bypass/instant'),
  }), { description: 'requests matching an entry go to the origin without the cache' }),
}, 'requests passed to the origin without the cache');

export const CachingKey = Section({
  caseSensitive: Bool(true, 'false: path and query are lower-cased in the key'),
  queryString: Section({
    enable: Bool(true, 'false: the query string is not part of the key (the origin still gets it)'),
    sort: Bool(false, 'parameters sorted by name in the key, so their order does not matter'),
    ignore: List(Str({ minLength: 1 }), { description: 'parameters left out of the key' }),
    keep: List(Str({ minLength: 1 }), { description: 'when not empty, only these parameters make the key' }),
  }),
  headers: List(Str({ minLength: 1 }), { description: 'request header fields whose values are part of the key (as if the origin had named them in Vary)' }),
  postMethod: Section({
    enable: Bool(false, 'POST answers are cached (this wins over frontEnd.bypass.postMethod.enable; a body over bodyContentLengthMax passes through)'),
    bodySensitive: Bool(false, 'the POST body (its SHA-256) is part of the cache key'),
    bodyContentLengthMax: Int(102400, { minimum: 0, description: 'largest POST body cached, bytes; a larger body passes through uncached' }),
  }),
}, 'what makes the cache key');
