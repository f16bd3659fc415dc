// `functions.network.http.frontEnd.accessControl`: document 2 cites the module (a redirect by
// `action` and `location`, the hook's skipIfMatched.accessControl) without its fields; these are
// ours, shaped like an nginx/Varnish allow-deny list: the first matching entry decides.
import { Bool, Int, List, Obj, OneOf, Opt, Section, Str } from './common.js';

export const AccessControlSchema = Section({
  enable: Bool(false, 'check every request of the host against matchingList'),
  default: OneOf(['allow', 'deny'], 'allow', 'what happens to a request no entry matches'),
  caseSensitive: Bool(true, 'case-sensitive URL, URLMATCH and HEADER value patterns'),
  matchingList: List(Obj({
    pattern: Str({ minLength: 1, description: 'conditions as in urlRewrites, joined by &; the first matching entry decides' }),
    action: OneOf(['allow', 'deny', 'redirect'], undefined, 'allow: serve; deny: 403 (TCP_DENIED); redirect: answer with location'),
    location: Opt(Str({ minLength: 1, description: 'redirect target; #0 the whole URL, #1..#9 the URL[...] captures' })),
    status: Int(302, { minimum: 301, maximum: 308, description: 'redirect status: 301, 302, 303, 307 or 308' }),
  })),
}, 'allow, deny or redirect requests by conditions');

export const ACCESS_REDIRECT_CODES = [301, 302, 303, 307, 308];
