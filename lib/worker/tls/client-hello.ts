// The server name of a TLS ClientHello, read before the handshake starts. node's SNICallback
// cannot be used to choose the certificate: node puts only the selected context's current
// certificate into the connection (UseSNIContext: one SSL_use_certificate), so the default
// context's certificate of the other key type stays in the connection and wins whenever the
// client prefers that type (an ECDSA default host answered an RSA host's TLS 1.3 clients).
// Reading the name first lets each connection start with its host's own context instead.

/** `name` undefined: no SNI. */
export type HelloName = { name: string | undefined } | 'more' | 'not-tls';

/** ClientHellos above this (record header included) are not waited for: no SNI assumed. */
export const MAX_HELLO = 16 * 1024 + 5;

/**
 * The SNI host name of the ClientHello at the start of `buf` (the first handshake record),
 * 'more' while the record is incomplete, 'not-tls' when it is no TLS handshake. A ClientHello
 * split over several records (rare: over 16 KB) is read from its first record only.
 */
export function helloName(buf: Buffer): HelloName {
  if (buf.length < 5) return buf.length > 0 && buf[0] !== 22 ? 'not-tls' : 'more';
  if (buf[0] !== 22 || buf[1] !== 3) return 'not-tls';
  const recordLen = buf.readUInt16BE(3);
  if (buf.length < 5 + recordLen) return 'more';
  const end = 5 + recordLen;
  let p = 5;
  if (buf[p] !== 1) return 'not-tls';
  p += 4 + 2 + 32; // handshake type and length, client_version, random
  const skip = (lenBytes: 1 | 2): boolean => {
    if (p + lenBytes > end) return false;
    const n = lenBytes === 1 ? buf[p]! : buf.readUInt16BE(p);
    p += lenBytes + n;
    return p <= end;
  };
  if (!skip(1) || !skip(2) || !skip(1)) return { name: undefined }; // session id, suites, compression
  if (p + 2 > end) return { name: undefined };
  const extEnd = Math.min(end, p + 2 + buf.readUInt16BE(p));
  p += 2;
  while (p + 4 <= extEnd) {
    const type = buf.readUInt16BE(p);
    const len = buf.readUInt16BE(p + 2);
    p += 4;
    if (type === 0 && p + 5 <= extEnd && buf[p + 2] === 0) {
      const nameLen = buf.readUInt16BE(p + 3);
      if (p + 5 + nameLen > extEnd) return { name: undefined };
      return { name: buf.toString('latin1', p + 5, p + 5 + nameLen).toLowerCase() };
    }
    p += len;
  }
  return { name: undefined };
}
