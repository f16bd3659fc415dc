// The header edits applied after the modify step decided them: the answer's front edits as it
// is written (TxResponse, H2Response: editOutgoing) and backEnd.modify (the request sent to
// the origin, the origin's answer before it is stored), which match per origin request.
import type { OutgoingHttpHeaders } from 'node:http';
import { applyEdits, type HeaderEdit } from '../../network/header-edit.js';
import type { ModifyRule } from '../../network/rules.js';
import type { Transaction } from './transaction.js';
import { ruleInput } from './rule-input.js';

const BACK_PATH = 'functions.network.http.backEnd.modify';

type Fields = Record<string, string | string[] | number | undefined>;

/**
 * The fields a writeHead sends, with the transaction's answer edits applied: given as an object
 * or as the flat [name, value, ...] list of the hit path (copied, it is shared), plus what
 * setHeader put on the response before.
 */
/** What HTTP/1 and HTTP/2 responses share for fields set before writeHead. */
export interface HeaderHolder {
  hasHeader(name: string): boolean;
  getHeader(name: string): unknown;
  removeHeader(name: string): void;
}

export function editOutgoing(res: HeaderHolder, fields: OutgoingHttpHeaders | readonly unknown[] | undefined, edits: readonly HeaderEdit[]): OutgoingHttpHeaders {
  let h: Fields;
  if (fields === undefined) h = {};
  else if (Array.isArray(fields)) {
    h = {};
    for (let i = 0; i + 1 < fields.length; i += 2) h[String(fields[i]).toLowerCase()] = fields[i + 1] as string | string[];
  } else h = fields as Fields;
  for (const e of edits) {
    if (h[e.key] === undefined && res.hasHeader(e.key)) {
      h[e.key] = res.getHeader(e.key) as string | string[] | number;
      res.removeHeader(e.key);
    }
  }
  applyEdits(h, edits);
  return h as OutgoingHttpHeaders;
}

function backEdits(tx: Transaction, rules: readonly ModifyRule[], side: 'headers' | 'responseHeaders', h: Fields): void {
  const input = ruleInput(tx);
  for (const r of rules) {
    if (r[side].length === 0 || (r.pattern !== undefined && r.pattern.match(input) === undefined)) continue;
    if (side === 'headers') tx.trace?.matched(tx.host.name, BACK_PATH, r.entry);
    applyEdits(h, r[side]);
  }
}

/** Back edits of the origin request's fields (not for an instant bypass: it goes as sent). */
export function modifyOriginRequest(tx: Transaction, h: Fields): void {
  const rules = tx.host.net?.backModify;
  if (rules !== undefined && tx.bypass !== 2) backEdits(tx, rules, 'headers', h);
}

/** Back edits of the origin answer's fields, before the cache or the client sees them. */
export function modifyOriginResponse(tx: Transaction, h: Fields): void {
  const rules = tx.host.net?.backModify;
  if (rules !== undefined && tx.bypass !== 2) backEdits(tx, rules, 'responseHeaders', h);
}
