// OCSP (RFC 6960) for stapling: the request for one certificate, and what a response says about
// it. A small DER reader and writer are enough: node has no OCSP API. The response's signature
// is not checked here: the client that gets the staple checks it (as with any staple), and a
// response that is not "successful" or does not name our certificate is never stapled.
import { createHash, X509Certificate } from 'node:crypto';

interface Tlv { tag: number; start: number; body: number; end: number }

function readTlv(buf: Buffer, at: number): Tlv {
  if (at + 2 > buf.length) throw new Error('truncated DER');
  const tag = buf[at]!;
  let len = buf[at + 1]!;
  let body = at + 2;
  if (len & 0x80) {
    const n = len & 0x7f;
    if (n === 0 || n > 4 || body + n > buf.length) throw new Error('bad DER length');
    len = 0;
    for (let i = 0; i < n; i++) len = len * 256 + buf[body + i]!;
    body += n;
  }
  if (body + len > buf.length) throw new Error('truncated DER');
  return { tag, start: at, body, end: body + len };
}

/** The elements inside a constructed TLV. */
function children(buf: Buffer, t: Tlv): Tlv[] {
  const out: Tlv[] = [];
  for (let p = t.body; p < t.end;) {
    const c = readTlv(buf, p);
    out.push(c);
    p = c.end;
  }
  return out;
}

function encode(tag: number, body: Buffer): Buffer {
  const n = body.length;
  const len = n < 0x80 ? Buffer.from([n]) : n < 0x100 ? Buffer.from([0x81, n]) : Buffer.from([0x82, n >> 8, n & 0xff]);
  return Buffer.concat([Buffer.from([tag]), len, body]);
}

const SEQ = 0x30;
const SHA1_ALG = Buffer.from('300906052b0e03021a0500', 'hex');

/** tbsCertificate's fields after the optional [0] version: serial, signature, issuer, validity, subject, spki. */
function tbsFields(der: Buffer): Tlv[] {
  const cert = readTlv(der, 0);
  const tbs = children(der, cert)[0]!;
  const f = children(der, tbs);
  return f[0]!.tag === 0xa0 ? f.slice(1) : f;
}

export interface CertId { der: Buffer; serial: Buffer }

/** The CertID (SHA-1, as responders expect) of `leaf` issued by `issuer`. */
export function certId(leaf: X509Certificate, issuer: X509Certificate): CertId {
  const l = tbsFields(leaf.raw);
  const serialTlv = l[0]!;
  const issuerName = leaf.raw.subarray(l[2]!.start, l[2]!.end);
  const spki = children(issuer.raw, tbsFields(issuer.raw)[5]!);
  const key = spki[1]!;
  const keyBits = issuer.raw.subarray(key.body + 1, key.end); // after the unused-bits byte
  const sha1 = (b: Buffer): Buffer => createHash('sha1').update(b).digest();
  const serial = leaf.raw.subarray(serialTlv.body, serialTlv.end);
  const der = encode(SEQ, Buffer.concat([SHA1_ALG, encode(0x04, sha1(issuerName)), encode(0x04, sha1(keyBits)), leaf.raw.subarray(serialTlv.start, serialTlv.end)]));
  return { der, serial };
}

/** OCSPRequest { tbsRequest { requestList { Request { reqCert } } } }. */
export function ocspRequest(id: CertId): Buffer {
  return encode(SEQ, encode(SEQ, encode(SEQ, encode(SEQ, id.der))));
}

/** The responder URL the certificate names (Authority Information Access, OCSP). */
export function responderUrl(leaf: X509Certificate): string | undefined {
  const m = /OCSP - URI:(\S+)/.exec(leaf.infoAccess ?? '');
  return m?.[1];
}

export interface OcspAnswer {
  status: 'good' | 'revoked' | 'unknown';
  thisUpdate: number;
  /** Epoch ms; undefined when the responder gives none (newer information is always available). */
  nextUpdate: number | undefined;
}

function time(buf: Buffer, t: Tlv): number {
  const s = buf.toString('latin1', t.body, t.end); // GeneralizedTime YYYYMMDDHHMMSS[.fff]Z
  return Date.UTC(+s.slice(0, 4), +s.slice(4, 6) - 1, +s.slice(6, 8), +s.slice(8, 10), +s.slice(10, 12), +s.slice(12, 14));
}

const BASIC = Buffer.from('06092b0601050507300101', 'hex'); // id-pkix-ocsp-basic

/** What a DER OCSPResponse says about the certificate of `id`; throws when it says nothing usable. */
export function parseResponse(der: Buffer, id: CertId): OcspAnswer {
  const top = children(der, readTlv(der, 0));
  const status = der[top[0]!.body];
  if (top[0]!.tag !== 0x0a || status !== 0) throw new Error(`responder status ${status} (not successful)`);
  if (top[1]?.tag !== 0xa0) throw new Error('no response bytes');
  const bytes = children(der, children(der, top[1])[0]!);
  if (!der.subarray(bytes[0]!.start, bytes[0]!.end).equals(BASIC)) throw new Error('not a basic OCSP response');
  const basic = children(der, readTlv(der, bytes[1]!.body));
  let data = children(der, basic[0]!);
  if (data[0]!.tag === 0xa0) data = data.slice(1);
  // responderID, producedAt, responses
  for (const single of children(der, data[2]!)) {
    const f = children(der, single);
    const cid = children(der, f[0]!);
    if (!der.subarray(cid[3]!.body, cid[3]!.end).equals(id.serial)) continue;
    const st = f[1]!.tag === 0x80 ? 'good' : f[1]!.tag === 0xa1 ? 'revoked' : 'unknown';
    const next = f.slice(3).find((x) => x.tag === 0xa0);
    return { status: st, thisUpdate: time(der, f[2]!), nextUpdate: next === undefined ? undefined : time(der, children(der, next)[0]!) };
  }
  throw new Error('the response does not name this certificate');
}
