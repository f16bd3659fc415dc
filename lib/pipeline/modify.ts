// Step "modify": the front header edits of functions.network.http.frontEnd.modify (the client's
// request as received; the answer's edits are kept on the transaction and applied as it is sent,
// hits included: parts/header-edits.ts). Patterns are matched once per request.
import { applyEdits, type HeaderEdit } from '../network/header-edit.js';
import type { ModifyRule } from '../network/rules.js';
import type { Transaction } from './parts/transaction.js';
import { ruleInput } from './parts/rule-input.js';
import type { Next } from './parts/runtime-state.js';

const FRONT_PATH = 'functions.network.http.frontEnd.modify';

type Fields = Record<string, string | string[] | number | undefined>;


/**
 * Step "modify": the front edits. A sibling's hand-off had them applied by the worker its client
 * talked to; they apply once, on a request's first pass (not again after a fallback).
 */
export function modifyStep(tx: Transaction): Next {
  const rules = tx.host.net?.frontModify;
  if (rules !== undefined && !tx.fromSibling && tx.fallback === undefined) modifyFront(tx, rules);
  return 'bypass';
}

/** Front edits: the request's fields change in place; the answer's edits wait on the transaction. */
function modifyFront(tx: Transaction, rules: readonly ModifyRule[]): void {
  const input = ruleInput(tx);
  let response: HeaderEdit[] | undefined;
  for (const r of rules) {
    if (r.pattern !== undefined && r.pattern.match(input) === undefined) continue;
    tx.trace?.matched(tx.host.name, FRONT_PATH, r.entry);
    if (r.headers.length > 0) applyEdits(tx.req.headers as Fields, r.headers);
    if (r.responseHeaders.length > 0) (response ??= []).push(...r.responseHeaders);
  }
  tx.responseEdits = response;
}
