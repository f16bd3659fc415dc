// The discovery datagram: one JSON object, signed with HMAC-SHA256 under the fleet's shared
// secret (env.management.cluster.discover.secret) so a stranger on the network cannot join.
// signature = hex(HMAC-SHA256(secret, "svc-discover/1\n" + name + "\n" + version + "\n" +
// buildNumber + "\n" + settingHash + "\n" + time)), `time` the sender's epoch milliseconds: an
// advertisement older or newer than MAX_SKEW_MS is refused (a recorded one cannot be replayed
// for ever).
import { createHmac, timingSafeEqual } from 'node:crypto';

const ADVERTISEMENT_TAG = 'svc-discover/1';
export const MAX_SKEW_MS = 5 * 60_000;

export interface Advertised { name: string; version: string; buildNumber: string; settingHash: string }
export interface SignedAdvertisement extends Advertised { tag: string; time: number; signature: string }

function mac(secret: string, a: Advertised, time: number): string {
  const text = [ADVERTISEMENT_TAG, a.name, a.version, a.buildNumber, a.settingHash, String(time)].join('\n');
  return createHmac('sha256', secret).update(text).digest('hex');
}

export function encodeAdvertisement(secret: string, a: Advertised, time: number): Buffer {
  const signed: SignedAdvertisement = { tag: ADVERTISEMENT_TAG, ...a, time, signature: mac(secret, a, time) };
  return Buffer.from(JSON.stringify(signed));
}

/** The advertisement in `data` when it is well formed, signed with `secret` and recent; else why not. */
export function decodeAdvertisement(secret: string, data: Buffer, now: number): SignedAdvertisement | { refused: string } {
  let v: unknown;
  try { v = JSON.parse(data.toString('utf8')); } catch { return { refused: 'not JSON' }; }
  const o = v as Record<string, unknown>;
  if (typeof v !== 'object' || v === null || o.tag !== ADVERTISEMENT_TAG) return { refused: 'not a discovery advertisement' };
  for (const k of ['name', 'version', 'buildNumber', 'settingHash', 'signature']) {
    if (typeof o[k] !== 'string') return { refused: `no ${k}` };
  }
  if (typeof o.time !== 'number' || !Number.isSafeInteger(o.time)) return { refused: 'no time' };
  const a = o as unknown as SignedAdvertisement;
  const expected = Buffer.from(mac(secret, a, a.time), 'hex');
  const given = Buffer.from(a.signature, 'hex');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return { refused: 'bad signature' };
  if (Math.abs(now - a.time) > MAX_SKEW_MS) return { refused: `time ${a.time} is more than ${MAX_SKEW_MS / 1000} s away` };
  return { tag: a.tag, name: a.name, version: a.version, buildNumber: a.buildNumber, settingHash: a.settingHash, time: a.time, signature: a.signature };
}
