// Message format v1 of document 2 (feeds from and feedbacks to the central server), and the
// `node` block every feedback carries.
import os from 'node:os';

export interface NodeInfo { productVer: string; settingVer: string; licenseId: string; hostname: string; iplist: string[] }

export interface FeedMessage {
  action: { api: string };
  parameters: Record<string, unknown>[];
  userdata?: unknown;
}

/** Where a feed message came from: the `action.event` of its feedback. */
export type Origin = '/_sys_/bootup' | `/_sys_/cli/${string}` | `/env/management/server/${string}` | `/_api_/${string}`;

export class MessageError extends Error {}

/** Parses a feed message; throws MessageError with what is wrong. */
export function parseFeedMessage(text: string): FeedMessage {
  let m: unknown;
  try {
    m = JSON.parse(text);
  } catch (err) {
    throw new MessageError(`feed message is not JSON: ${(err as Error).message}`);
  }
  if (typeof m !== 'object' || m === null || Array.isArray(m)) throw new MessageError('feed message is not a JSON object');
  const o = m as Record<string, unknown>;
  if (o.messageVer !== undefined && String(o.messageVer) !== '1') throw new MessageError(`messageVer ${String(o.messageVer)} is not 1`);
  const action = o.action as Record<string, unknown> | undefined;
  if (typeof action?.api !== 'string') throw new MessageError('action.api missing');
  const params = o.parameters ?? [];
  if (!Array.isArray(params) || params.some((p) => typeof p !== 'object' || p === null || Array.isArray(p))) {
    throw new MessageError('parameters must be an array of objects');
  }
  return { action: { api: action.api }, parameters: params as Record<string, unknown>[], ...('userdata' in o ? { userdata: o.userdata } : {}) };
}

/** The node's non-loopback addresses. */
export function ipList(): string[] {
  return Object.values(os.networkInterfaces()).flatMap((list) => (list ?? []).filter((a) => !a.internal).map((a) => a.address));
}

/** A feedback message: `extra` holds the members of its kind (parameters, setting, nodelist ...). */
export function feedback(node: NodeInfo, now: number, extra: Record<string, unknown>): Record<string, unknown> {
  return { messageVer: '1', timestamp: new Date(now).toISOString(), node, ...extra };
}
