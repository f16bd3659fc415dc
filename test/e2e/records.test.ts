// Black-box: the transaction records of a real cluster (primary + 2 RT workers in hash balance),
// seen through the workers' test sink (SVC_TEST_RECORD_DIR: one JSON line per record).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { Agent, request } from 'undici';
import { TestOrigin } from '../helpers/origin.js';
import { freePort } from '../helpers/ports.js';
import { primaryPids, startServer } from '../helpers/server.js';
import { waitFor } from '../helpers/wait.js';

interface Rec { worker: number; sessionId: number; ctxId: string; urlReceived: string; status: number; fromSibling: boolean; handedTo: number; cacheResult: string }

const recordDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-records-'));
const origin = await new TestOrigin().start();
const port = await freePort();
const server = await startServer([{ name: 'r.com', listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}`] } }],
  { workers: 2, balance: 'hash', env: { SVC_TEST_RECORD_DIR: recordDir } });
t.teardown(async () => { await server.stop(); await origin.stop(); fs.rmSync(recordDir, { recursive: true, force: true }); });

function records(): Rec[] {
  const out: Rec[] = [];
  for (const f of fs.readdirSync(recordDir)) {
    for (const line of fs.readFileSync(path.join(recordDir, f), 'utf8').split('\n')) if (line !== '') out.push(JSON.parse(line) as Rec);
  }
  return out;
}

/** Waits (bounded) until the records satisfy the predicate; they are written as transactions end. */
async function waitRecords(pred: (rs: Rec[]) => boolean, ms = 10000): Promise<Rec[]> {
  for (const end = Date.now() + ms; ; await new Promise((r) => setTimeout(r, 20))) {
    const rs = records();
    if (pred(rs)) return rs;
    if (Date.now() > end) throw new Error(`records not there in ${ms} ms (${rs.length} records, files ${fs.readdirSync(recordDir).join(' ')})`);
  }
}

function workerPids(): number[] {
  try {
    return execFileSync('ps', ['-o', 'pid=', '--ppid', String(primaryPids(server)[0])]).toString().trim().split(/\s+/).filter(Boolean).map(Number);
  } catch { return []; }
}

/** `n` requests, each on a new connection, so the kernel spreads them over both workers. */
async function load(prefix: string, n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    const dispatcher = new Agent({ pipelining: 0, keepAliveTimeout: 1 });
    const r = await request(`http://127.0.0.1:${port}${prefix}/${i % 8}`, { headers: { host: 'r.com' }, dispatcher });
    await r.body.text();
    await dispatcher.close();
  }
}

const PRIMARY_IDS = 2 ** 50;

t.test('session ids are unique across the workers and come from the primary\'s blocks', async (t) => {
  await load('/a', 40);
  const rs = await waitRecords((all) => all.filter((r) => r.urlReceived.startsWith('/a/') && !r.fromSibling).length >= 40);
  const ids = rs.map((r) => r.sessionId);
  t.equal(new Set(ids).size, ids.length, 'no id twice');
  t.same([...new Set(rs.map((r) => r.worker))].sort(), [0, 1], 'both workers recorded');
  t.ok(ids.every((id) => Number.isSafeInteger(id) && id >= PRIMARY_IDS), 'every id from a primary block');
});

t.test('a handed-off request is recorded by both workers under one x-ctx-id', async (t) => {
  const rs = await waitRecords((all) => all.some((r) => r.handedTo >= 0));
  const handed = rs.filter((r) => r.handedTo >= 0);
  for (const h of handed) {
    const owner = rs.find((r) => r.fromSibling && r.ctxId === h.ctxId);
    t.ok(owner, `the owner's record of ${h.urlReceived}`);
    if (owner === undefined) continue;
    t.equal(owner.worker, h.handedTo, 'recorded by the owner it was handed to');
    t.not(owner.sessionId, h.sessionId, 'a session id each');
    t.equal(h.cacheResult, owner.cacheResult, 'the client record carries the owner\'s cache result');
  }
});

t.test('session ids stay unique when a worker is replaced', async (t) => {
  const before = workerPids();
  t.equal(before.length, 2);
  process.kill(before[0]!, 'SIGKILL');
  const died = await server.waitForLog((l) => l.msg === 'worker died; replacing it');
  // The replacement is up when its internal port (baseHostingPort + index) answers.
  const internal = `http://127.0.0.1:${server.basePort + Number(died.worker)}/up`;
  const up = await waitFor(async () => {
    try {
      const r = await request(internal, { headers: { host: 'r.com' } });
      await r.body.text();
      return true;
    } catch {
      return false;
    }
  }, { timeoutMs: 15_000, intervalMs: 50 });
  t.ok(up, 'the replacement listens');
  const fresh = workerPids().find((pid) => !before.includes(pid));
  t.ok(fresh !== undefined, 'a new worker process');
  await load('/b', 40);
  const rs = await waitRecords((all) => all.filter((r) => r.urlReceived.startsWith('/b/') && !r.fromSibling).length >= 40 &&
    fs.existsSync(path.join(recordDir, `records-${fresh}.jsonl`)));
  const ids = rs.map((r) => r.sessionId);
  t.equal(new Set(ids).size, ids.length, 'no id twice, before and after the restart');
  t.ok(ids.every((id) => id >= PRIMARY_IDS), 'the replacement took a new block from the primary');
});
