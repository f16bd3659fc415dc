// functions.network.http.frontEnd.answerFields: the request id (the x-ctx-id of the log lines)
// and the node's name on the answers of a host, so that a client's report can be tied to the
// logs and to the node. Set on the response just before its head is written (TxResponse and
// H2Response), so every stage's answer carries them without each stage knowing.
import os from 'node:os';
import type { TransactionRecord } from './transaction.js';

/** The machine's name, read once (nodeName.value null). */
const MACHINE = os.hostname();

export interface FieldSetter {
  setHeader(name: string, value: string): unknown;
}

/** Whether setAnswerFields sets any field on this transaction's answer. */
export function setsAnswerFields(tx: TransactionRecord): boolean {
  const f = tx.host?.setting.functions.network.http.frontEnd.answerFields;
  return f !== undefined && (f.requestId.enable || f.nodeName.enable);
}

export function setAnswerFields(res: FieldSetter, tx: TransactionRecord | undefined): void {
  const f = tx?.host?.setting.functions.network.http.frontEnd.answerFields;
  if (f === undefined) return;
  if (f.requestId.enable) res.setHeader(f.requestId.name, tx!.ctxId);
  if (f.nodeName.enable) res.setHeader(f.nodeName.name, f.nodeName.value ?? MACHINE);
}
