// The fields every answer's head gets, whichever transport writes it: TxResponse for HTTP/1
// (tx-response.ts), H2Response for HTTP/2 (h2-stream.ts). Written once here, so a field added
// to answers reaches both: the answer fields (request id, node name), the host's Cache-Status
// member, the front modify edits, and what the record keeps of them; and the status after a
// fallback's serviceCode. The transports keep only their own writing of the head.
import type { OutgoingHttpHeader, OutgoingHttpHeaders } from 'node:http';
import type { TransactionRecord } from './transaction.js';
import { setAnswerFields, type FieldSetter } from './answer-fields.js';
import { editOutgoing, type HeaderHolder } from './header-edits.js';
import { withCacheStatus } from './cache-status.js';
import { serviceStatus } from './fallback.js';

export type AnswerFields = OutgoingHttpHeaders | readonly OutgoingHttpHeader[] | undefined;

/** The fields the head is written with (the record keeps them as tx.responseFields). */
export function answerFields(res: FieldSetter & HeaderHolder, tx: TransactionRecord | undefined, fields: AnswerFields): AnswerFields {
  setAnswerFields(res, tx);
  if (tx === undefined) return fields;
  let out: AnswerFields = tx.host !== undefined ? withCacheStatus(tx, fields) : fields;
  if (tx.responseEdits !== undefined) out = editOutgoing(res, out, tx.responseEdits);
  tx.responseFields = out as OutgoingHttpHeaders | OutgoingHttpHeader[] | undefined;
  return out;
}

/** The status the client gets: a fallback's serviceCode replaces the answer's (fallback.ts). */
export function answerStatus(tx: TransactionRecord | undefined, status: number): number {
  return tx?.fallback !== undefined ? serviceStatus(tx, status) : status;
}
