// The query language of `/get` (document 1) and of `svc get`: what a query names, parsed once so
// the API routes and the command line agree on every form.
//
//   setting | setting/running | setting/artifact
//   setting[<sel>][/running|/artifact]       `[<sel>]` right after `setting` selects hosting[]
//   ... followed by a path: .member  or  [<sel>]  any number of times
//   hosting | hosting[<sel>]
//   https | discover | license
//   <sel> := <index> (digits) | name=<name> | <name>    an all-digit selector is an index;
//            write name=<digits> for a host named by digits
// A leading `/` and `get/` are ignored, so `/get/setting.env` and `setting.env` are the same.
import { codedError, type CodedError } from '../errors/codes.js';

export type Step =
  | { kind: 'member'; name: string }
  | { kind: 'index'; index: number }
  | { kind: 'name'; name: string };

export type Query =
  | { target: 'setting'; form: 'running' | 'artifact'; steps: Step[] }
  | { target: 'hosting'; select?: Step }
  | { target: 'https' }
  | { target: 'discover' }
  | { target: 'license' };

/** A malformed query (the "bad call" of document 1): QUERY_BAD of lib/errors/codes.ts. */
const syntax = (detail: string): CodedError<'QUERY_BAD'> => codedError('QUERY_BAD', detail);

const MEMBER = /^[^.[\]/=\s]+/;

/** A selector `[...]` at `s[at]`; returns the step and the position after `]`. */
function selector(s: string, at: number): { step: Step; next: number } {
  const end = s.indexOf(']', at);
  if (end < 0) throw syntax(`"[" at offset ${at} is not closed`);
  const body = s.slice(at + 1, end);
  if (body.includes('[')) throw syntax(`nested "[" in "[${body}]"`);
  if (body === '') throw syntax('empty selector "[]"');
  if (/^\d+$/.test(body)) {
    const index = Number(body);
    if (!Number.isSafeInteger(index)) throw syntax(`index ${body} is too large`);
    return { step: { kind: 'index', index }, next: end + 1 };
  }
  if (body.startsWith('name=')) {
    const name = body.slice(5);
    if (name === '') throw syntax('empty name in "[name=]"');
    return { step: { kind: 'name', name }, next: end + 1 };
  }
  if (body.includes('=')) throw syntax(`unknown selector "[${body}]": use [<index>], [<name>] or [name=<name>]`);
  return { step: { kind: 'name', name: body }, next: end + 1 };
}

/** `.member` and `[sel]` steps from `s[at]` to the end. */
function steps(s: string, at: number): Step[] {
  const out: Step[] = [];
  let i = at;
  while (i < s.length) {
    const c = s[i];
    if (c === '.') {
      const m = MEMBER.exec(s.slice(i + 1));
      if (m === null) throw syntax(`expected a member name after "." at offset ${i}`);
      out.push({ kind: 'member', name: m[0] });
      i += 1 + m[0].length;
    } else if (c === '[') {
      const r = selector(s, i);
      out.push(r.step);
      i = r.next;
    } else {
      throw syntax(`unexpected "${s.slice(i)}": a path goes on with .<member> or [<selector>]`);
    }
  }
  return out;
}

export function normaliseQuery(raw: string): string {
  let q = raw.trim();
  while (q.startsWith('/')) q = q.slice(1);
  if (q.startsWith('get/')) q = q.slice(4);
  return q.length > 1 && q.endsWith('/') ? q.slice(0, -1) : q;
}

/** Parses a query; throws QUERY_BAD (bad call) or QUERY_UNKNOWN (no such query). */
export function parseQuery(raw: string): Query {
  const q = normaliseQuery(raw);
  if (q === 'https' || q === 'discover' || q === 'license') return { target: q };
  if (q === 'hosting' || q.startsWith('hosting[')) {
    if (q === 'hosting') return { target: 'hosting' };
    const r = selector(q, 7);
    if (r.next !== q.length) throw syntax(`unexpected "${q.slice(r.next)}" after the hosting selector`);
    return { target: 'hosting', select: r.step };
  }
  if (q === 'setting' || /^setting[./[]/.test(q)) {
    let i = 7;
    const pre: Step[] = [];
    if (q[i] === '[') {
      const r = selector(q, i);
      pre.push({ kind: 'member', name: 'hosting' }, r.step);
      i = r.next;
    }
    let form: 'running' | 'artifact' = 'running';
    const formMatch = /^\/(running|artifact)(?=$|[.[])/.exec(q.slice(i));
    if (formMatch !== null) {
      form = formMatch[1] as 'running' | 'artifact';
      i += formMatch[0].length;
    } else if (q[i] === '/') {
      throw syntax(`unknown setting form "${q.slice(i)}": use /running or /artifact`);
    }
    return { target: 'setting', form, steps: [...pre, ...steps(q, i)] };
  }
  throw codedError('QUERY_UNKNOWN', q);
}


/** The query text of a path of steps, for messages: `setting.hosting[name=a.com].origin`. */
export function describe(root: string, path: readonly Step[]): string {
  return root + path.map((s) => (s.kind === 'member' ? `.${s.name}` : s.kind === 'index' ? `[${s.index}]` : `[name=${s.name}]`)).join('');
}
