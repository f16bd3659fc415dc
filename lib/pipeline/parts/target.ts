// The request target forms of RFC 9112 3.2: origin-form (`/path?q`), absolute-form
// (`http://host/path`, whose authority replaces Host; without userinfo), asterisk-form
// (`OPTIONS *`), and authority-form (CONNECT only, which a reverse proxy refuses).

export interface RequestTarget {
  /** Host name without port, lower-case, '' when the request names none. */
  host: string;
  /** Path plus query as sent to the origin ('*' for asterisk-form). */
  url: string;
}

export type TargetError = 'bad-target';

/** The last Host value seen and its host: a client sends the same one on every request. */
let lastValue = '';
let lastHost = '';

/** Strips the port and lower-cases a Host value; IPv6 literals keep their brackets. */
export function hostWithoutPort(value: string): string {
  if (value === lastValue) return lastHost;
  const host = parseHost(value);
  lastValue = value;
  lastHost = host;
  return host;
}

function parseHost(value: string): string {
  let end = value.length;
  if (value.charCodeAt(0) === 91 /* [ */) {
    const close = value.indexOf(']');
    return close < 0 ? value.toLowerCase() : value.slice(0, close + 1).toLowerCase();
  }
  const colon = value.lastIndexOf(':');
  if (colon >= 0) end = colon;
  const host = value.slice(0, end);
  // Most clients already send lower case; avoid the copy then.
  return /[A-Z]/.test(host) ? host.toLowerCase() : host;
}

export function parseTarget(rawUrl: string, hostHeader: string | undefined): RequestTarget | TargetError {
  const first = rawUrl.charCodeAt(0);
  if (first === 47 /* / */) return { host: hostHeader ? hostWithoutPort(hostHeader) : '', url: rawUrl };
  if (rawUrl === '*') return { host: hostHeader ? hostWithoutPort(hostHeader) : '', url: '*' };
  const schemeEnd = rawUrl.indexOf('://');
  if (schemeEnd > 0) {
    const scheme = rawUrl.slice(0, schemeEnd).toLowerCase();
    if (scheme !== 'http' && scheme !== 'https') return 'bad-target';
    const authorityStart = schemeEnd + 3;
    let pathStart = authorityStart;
    while (pathStart < rawUrl.length) {
      const c = rawUrl.charCodeAt(pathStart);
      if (c === 47 || c === 63 /* ? */) break;
      pathStart++;
    }
    const authority = rawUrl.slice(authorityStart, pathStart);
    // RFC 9110 4.2.4: userinfo in an http(s) URI is an error (deprecated; it makes the host a
    // reader sees first differ from the one the URI names).
    if (authority === '' || authority.includes('@')) return 'bad-target';
    const rest = rawUrl.slice(pathStart);
    return { host: hostWithoutPort(authority), url: rest === '' ? '/' : rest.charCodeAt(0) === 63 ? '/' + rest : rest };
  }
  return 'bad-target';
}
