// The discovery datagram: one JSON object, signed with HMAC-SHA256 under the fleet's shared
// secret (env.management.cluster.discover.secret) so a stranger on the network cannot join.
// signature = hex(HMAC-SHA256(secret, JSON.stringify(["svc-discover/2", name, version,
// buildNumber, settingHash, address, seq, time]))), where
// - `address` is the IPv4 address the datagram is sent from: a receiver refuses it from any
//   other source, so a recorded advertisement replayed from other addresses lists nothing;
// - `seq` grows with each advertisement of the node (its clock in ms, or one more than the last
//   when the clock has not moved on, so it also grows across restarts): a receiver refuses one
//   not above the last it accepted from that address, so a replay from the node's own address
//   is refused too (discovery.ts keeps the last);
// - `time` is the sender's epoch milliseconds: an advertisement older or newer than
//   MAX_SKEW_MS is refused (a receiver needs to remember a sequence only that long).
// The signed text is a JSON array, so no field can be shifted into another.
import { createHmac, timingSafeEqual } from 'node:crypto';

const ADVERTISEMENT_TAG = 'svc-discover/2';
export const MAX_SKEW_MS = 5 * 60_000;

export interface Advertised { name: string; version: string; buildNumber: string; settingHash: string }
/** What binds one datagram to its sender and moment. */
export interface Binding { address: string; seq: number; time: number }
export interface SignedAdvertisement extends Advertised, Binding { tag: string; signature: string }

function mac(secret: string, a: Advertised, b: Binding): string {
  const text = JSON.stringify([ADVERTISEMENT_TAG, a.name, a.version, a.buildNumber, a.settingHash, b.address, b.seq, b.time]);
  return createHmac('sha256', secret).update(text).digest('hex');
}

export function encodeAdvertisement(secret: string, a: Advertised, b: Binding): Buffer {
  const signed: SignedAdvertisement = { tag: ADVERTISEMENT_TAG, ...a, ...b, signature: mac(secret, a, b) };
  return Buffer.from(JSON.stringify(signed));
}

/**
 * The advertisement in `data`, received from `from`, when it is well formed, signed with
 * `secret`, signed for that address and recent; else why not. Whether its `seq` is new is the
 * receiver's to check.
 */
export function decodeAdvertisement(secret: string, data: Buffer, from: string, now: number): SignedAdvertisement | { refused: string } {
  let v: unknown;
  try { v = JSON.parse(data.toString('utf8')); } catch { return { refused: 'not JSON' }; }
  const o = v as Record<string, unknown>;
  if (typeof v !== 'object' || v === null || o.tag !== ADVERTISEMENT_TAG) return { refused: 'not a discovery advertisement' };
  for (const k of ['name', 'version', 'buildNumber', 'settingHash', 'address', 'signature']) {
    if (typeof o[k] !== 'string') return { refused: `no ${k}` };
  }
  for (const k of ['seq', 'time']) {
    if (typeof o[k] !== 'number' || !Number.isSafeInteger(o[k])) return { refused: `no ${k}` };
  }
  const a = o as unknown as SignedAdvertisement;
  const expected = Buffer.from(mac(secret, a, a), 'hex');
  const given = Buffer.from(a.signature, 'hex');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return { refused: 'bad signature' };
  if (a.address !== from) return { refused: `signed for ${a.address.slice(0, 64)}, sent from ${from}` };
  if (Math.abs(now - a.time) > MAX_SKEW_MS) return { refused: `time ${a.time} is more than ${MAX_SKEW_MS / 1000} s away` };
  return {
    tag: a.tag, name: a.name, version: a.version, buildNumber: a.buildNumber, settingHash: a.settingHash,
    address: a.address, seq: a.seq, time: a.time, signature: a.signature,
  };
}
