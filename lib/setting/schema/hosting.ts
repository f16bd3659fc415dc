// `hosting[]`: the virtual hosts (document 2).
import { Type, type TSchema } from 'typebox';
import { Bool, Formatted, List, NullStr, Obj, OneOf, Opt, Section, Size, Str } from './common.js';

const UrlRewrite = Obj({
  pattern: Str({ minLength: 1, description: 'conditions $NAME[value] joined by &' }),
  replace: Str({ description: 'new URL; #1..#9 captured groups, #0 the whole URL' }),
  accessLogUrl: Opt(OneOf(['replace', 'pattern'], undefined, 'replace: log the rewritten URL; pattern: the client URL')),
  caseSensitive: Bool(true),
});

const Fallbacks = Section({
  enable: Bool(false),
  matchingList: List(Obj({
    phase: OneOf(['frontend', 'backend'], 'frontend'),
    resCodes: List(Type.Union([Type.Integer({ minimum: 100, maximum: 599 }), Formatted('svc-rescode')])),
    pattern: Opt(Str()),
    replace: Opt(Str()),
    serviceCode: Type.Union([Type.String(), Type.Integer()], {
      default: '#LAST',
      description: '#LAST, #FIRST, #BEFORE or a status code (not 1xx, 206 or 3xx)',
    }),
  })),
}, 'fallback policy');

const Cert = Obj({
  cert: Str({ minLength: 1, description: 'PEM certificate, path or URL' }),
  key: Str({ minLength: 1, description: 'unencrypted PEM RSA key, path or URL' }),
  ca: Opt(Str({ description: 'PEM CA chain, path or URL' })),
});

const HttpsOptions = Section({
  listen: Formatted('svc-tls-listen', { default: '*:443', description: 'IP:Port or NIC name; the most explicit match wins' }),
  enableTls13: Bool(true),
  enableTls12: Bool(true),
  enableTls11: Bool(false),
  enableTls10: Bool(false),
  enableSsl30: Bool(false),
  ciphersuite: Str({ default: 'ALL:!ADH:RC4+RSA:+HIGH:+MEDIUM:+LOW:+SSLv2:+EXP', description: 'OpenSSL cipher expression' }),
  forwardSecrecy: Bool(true, 'true: forward-secret suites first; false: ClientHello order'),
  ocspStapling: Bool(true, 'staple the OCSP response of a certificate that names a responder; false: never ask the responder'),
}, 'TLS service options ("https options" of document 2)');

/**
 * A host entry. `functions` is given as the already-derived schema of a partial functions object
 * (no defaults: a host only overrides what it writes).
 */
export function hostSchema<F extends TSchema>(functions: F) {
  return Obj({
    name: Formatted('svc-hostname', { description: 'virtual host name; unique' }),
    enable: Bool(true),
    listen: Formatted('svc-listen', { default: '*:80', description: '{IP}:{Port}; off opens no service port' }),
    aliases: Opt(Type.Array(Formatted('svc-hostname'), { description: 'alias names; wildcard such as *.example.com' })),
    mode: Section({
      volatile: Bool(false, 'memory-only host; content at or above nonVolatileSize still uses disk'),
      nonVolatileSize: Size('0'),
      facadeHost: NullStr({ description: 'when set, that host does all HTTP handling except statistics and logs' }),
      basehost: Opt(Str({
        minLength: 1,
        description: 'another host of hosting[], or a host file path relative to the setting file; everything except name and mode is copied',
      })),
    }),
    origin: Opt(Obj({
      protocol: OneOf(['http', 'https'], 'http'),
      address: Type.Array(Formatted('svc-origin'), { default: [] }),
      address2: Type.Array(Formatted('svc-origin'), { default: [], description: 'secondary addresses' }),
    })),
    urlRewrites: Opt(Type.Array(UrlRewrite, { description: 'URL preprocessing, applied in order before routing' })),
    fallbacks: Fallbacks,
    https: Opt(Type.Array(Cert, { description: 'certificates' })),
    httpsOptions: HttpsOptions,
    functions: Opt(functions),
  });
}
