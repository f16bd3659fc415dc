// Black-box: every member document 1 lists for Host, System and VirtualHost[] is in the
// statistics documents (JSON and XML) with its exact spelling, and the members of issue 12 show
// what happened on a real node: sessions and sockets while a request is held open, the
// management ACL's allow/deny, the disk census and cache file events, directory statistics, and
// a cache disk whose directory is gone (Unmounted, State Emergency).
import http from 'node:http';
import net from 'node:net';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { XMLParser } from 'fast-xml-parser';
import { TestOrigin } from '../helpers/origin.js';
import { consecutiveFreePorts, freePort } from '../helpers/ports.js';
import { rawRequest } from '../helpers/raw-client.js';
import { baseSetting, startWithSetting, writeSetting } from '../helpers/server.js';
import { pollUntil } from '../helpers/wait.js';

const CLASSES = ['2xx', '3xx', '4xx', '5xx'];
const sides = (side: 'Origin' | 'Client'): string[] => [
  `${side}Session`, `${side}ActiveSession`, `${side}Inbound`, `${side}Outbound`, `${side}ReqCount`,
  `${side}ResTotalCount`, `${side}ResTotalTimeRes`, `${side}ResTotalTimeComplete`,
  ...CLASSES.flatMap((c) => [`${side}Res${c}Count`, `${side}Res${c}TimeRes`, `${side}Res${c}TimeComplete`]),
];
// Document 1, "Monitoring statistics", member by member.
const HOST = ['Version', 'Name', 'State', 'Uptime', ...sides('Origin'), ...sides('Client'), 'RequestHitRatio', 'ByteHitRatio', 'System', 'VirtualHost'];
const HTTP_COUNT_SUM = ['OriginReqCount', 'OriginResTotalCount', ...CLASSES.map((c) => `OriginRes${c}Count`),
  'ClientReqCount', 'ClientResTotalCount', ...CLASSES.map((c) => `ClientRes${c}Count`)];
const HIT_RESULTS = ['TCP_NONE', 'TCP_HIT', 'TCP_IMS_HIT', 'TCP_REFRESH_HIT', 'TCP_REF_FAIL_HIT', 'TCP_NEGATIVE_HIT', 'TCP_REDIRECT_HIT',
  'TCP_MISS', 'TCP_REFRESH_MISS', 'TCP_CLIENT_REFRESH_MISS', 'TCP_DENIED', 'TCP_ERROR', 'TCP_RATE_LIMITED'];
const SYSTEM: Record<string, string[] | null> = {
  CPU: ['Kernel', 'User', 'Idle', 'ProcKernel', 'ProcUser', 'Nice', 'IOWait', 'IRQ', 'SoftIRQ', 'Steal'],
  Mem: ['Free'],
  Storage: ['Disk'],
  ServerSocket: ['Total', 'Established', 'Accepted', 'Closed'],
  ClientSocket: ['Total', 'Established', 'Connected', 'Closed'],
  TCPSocket: ['Established', 'Timewait', 'Orphan', 'Alloc', 'Mem'],
  EQ: null, RQ: null, WaitingFiles2Write: null,
  ServiceAccess: ['Allow', 'Deny'],
  SystemLoadAverage: ['Min1', 'Min5', 'Min15'],
  URLRewrite: null,
};
const DISK = ['Path', 'Status', 'Read', 'ReadMerged', 'ReadSectors', 'ReadTime', 'Write', 'WriteMerged', 'WriteSectors', 'WriteTime', 'IOProgress', 'IOTime', 'IOWeightedTime'];
const VHOST = ['Name', 'Uptime', ...sides('Origin'), ...sides('Client'), 'RequestHitRatio', 'ByteHitRatio', 'Memory', 'SecuredMemory',
  'FileTotal', 'FileOpened', 'FileInstance', 'WaitingFiles2Delete', 'ClientHttpReqBypass', 'ClientHttpReqDenied',
  'Disk', 'Session', 'Cached', 'CacheFileEvent', 'OriginTraffic', 'ClientTraffic', 'UrlBypass'];
const CLIENT_TRAFFIC = ['Depth', 'Accum', 'HttpsTraffic', 'TrafficCount', 'Traffic'];
const TRAFFIC = ['RequestHitRatio', 'Path', 'HttpReqCountSum', 'HttpReqCount', 'HttpReqHeaderSize', 'HttpReqBodySize', 'HttpResHeaderSize',
  'HttpResBodySize', 'Response', 'SSL', 'RequestHit', 'RequestHitSum'];
const RESPONSE_GROUP = ['CountSum', 'Count', 'CompletedSum', 'Completed', 'TimeRes', 'TimeComplete'];

type Obj = Record<string, any>;

function missing(o: Obj, names: string[]): string[] {
  return names.filter((n) => !(n in o));
}

/** Every listed member of the document, as one list of paths that are missing. */
function walk(h: Obj, min5: boolean): string[] {
  const out: string[] = [];
  const check = (o: Obj | undefined, names: string[], at: string): void => {
    if (o === undefined || o === null || typeof o !== 'object') { out.push(at); return; }
    for (const m of missing(o, names)) out.push(`${at}.${m}`);
  };
  check(h, min5 ? [...HOST, 'HttpCountSum', 'HttpRequestHitSum'] : HOST, 'Host');
  if (min5) {
    check(h.HttpCountSum, HTTP_COUNT_SUM, 'Host.HttpCountSum');
    check(h.HttpRequestHitSum, HIT_RESULTS, 'Host.HttpRequestHitSum');
  }
  check(h.System, Object.keys(SYSTEM), 'Host.System');
  for (const [k, inner] of Object.entries(SYSTEM)) if (inner !== null) check(h.System?.[k], inner, `Host.System.${k}`);
  const disks = [h.System?.Storage?.Disk].flat();
  disks.forEach((d: Obj, i) => check(d, DISK, `Host.System.Storage.Disk[${i}]`));
  const vhosts = [h.VirtualHost].flat();
  if (vhosts.length === 0) out.push('Host.VirtualHost[]');
  vhosts.forEach((v: Obj, i) => {
    const at = `Host.VirtualHost[${i}]`;
    check(v, min5 ? [...VHOST, 'ClientHttpReqBypassSum', 'ClientHttpReqDeniedSum'] : VHOST, at);
    check(v?.CacheFileEvent, ['Create', 'Swap', 'Erase', 'Purge', 'Expire'], `${at}.CacheFileEvent`);
    check(v?.ClientTraffic, CLIENT_TRAFFIC, `${at}.ClientTraffic`);
    [v?.ClientTraffic?.Traffic].flat().forEach((e: Obj, j) => {
      const et = `${at}.ClientTraffic.Traffic[${j}]`;
      check(e, TRAFFIC, et);
      check(e?.Response, ['ResTotal', 'Res2xx', 'Res3xx', 'Res4xx', 'Res5xx'], `${et}.Response`);
      for (const g of ['ResTotal', 'Res2xx', 'Res3xx', 'Res4xx', 'Res5xx']) check(e?.Response?.[g], RESPONSE_GROUP, `${et}.Response.${g}`);
      check(e?.SSL, ['RecvSize', 'SendSize'], `${et}.SSL`);
      check(e?.RequestHit, HIT_RESULTS, `${et}.RequestHit`);
      check(e?.RequestHitSum, HIT_RESULTS, `${et}.RequestHitSum`);
    });
  });
  return out;
}

/** A GET from a chosen loopback source address (the ACL decides by it). */
function getFrom(localAddress: string, port: number, p: string): Promise<number> {
  return new Promise((resolve, reject) => {
    http.get({ host: '127.0.0.1', port, path: p, localAddress }, (res) => { res.resume(); res.on('end', () => resolve(res.statusCode ?? 0)); }).on('error', reject);
  });
}

t.test('every member document 1 lists is in the statistics, and each shows what happened on the node', async (t) => {
  const origin = await new TestOrigin().start();
  const body = 'y'.repeat(2000);
  origin.on('/img/a.jpg', (_q, res) => { res.writeHead(200, { 'cache-control': 'max-age=600', 'content-length': 2000 }); res.end(body); });
  origin.on('/img/b.jpg', (_q, res) => { res.writeHead(200, { 'cache-control': 'max-age=600', 'content-length': 2000 }); res.end(body); });
  let release: (() => void) | undefined;
  origin.on('/slow', (_q, res) => {
    res.writeHead(200, { 'cache-control': 'no-store', 'content-length': 4 });
    res.write('sl');
    release = () => res.end('ow');
  });
  const port = await freePort();
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'svc-members-'));
  const basePort = await consecutiveFreePorts(1);
  const apiPort = await freePort();
  const setting = baseSetting([{
    name: 'm.test', listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}`] },
    functions: { statistics: { directory: { enable: true, depth: 1 } } },
  }], basePort, {}, apiPort);
  const server = await startWithSetting(dir, await writeSetting(dir, setting), basePort, {}, apiPort);
  t.teardown(async () => { release?.(); await server.stop(); await origin.stop(); });
  const api = `http://127.0.0.1:${apiPort}`;
  const doc = async (p: string): Promise<Obj> => ((await (await fetch(`${api}${p}`)).json()) as { Host: Obj }).Host;
  const send = (p: string) => rawRequest(port, `GET ${p} HTTP/1.1\r\nHost: m.test\r\nConnection: close\r\n\r\n`);

  // A miss and a hit under /img/, another miss: two objects written to disk.
  t.equal((await send('/img/a.jpg')).status, 200);
  t.equal((await send('/img/a.jpg')).status, 200);
  t.equal((await send('/img/b.jpg')).status, 200);

  // The members, by name, in every form.
  for (const p of ['/monitoring/realtime', '/monitoring/average?min=1', '/monitoring/average?min=5']) {
    const h = await doc(p);
    t.same(walk(h, p.endsWith('min=5')), [], `${p}: every listed member is there`);
  }
  const xml = await (await fetch(`${api}/monitoring/average?min=5&type=XML`)).text();
  const parsed = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '' }).parse(xml) as { Host: Obj };
  t.same(walk(parsed.Host, true), [], 'the XML form has them too');
  for (const k of ['EQ', 'RQ', 'WaitingFiles2Write', 'URLRewrite']) t.match(xml, new RegExp(`<${k}>\\d+(\\.\\d+)?</${k}>`), `${k} is element text`);
  t.match(xml, /<Memory>\d+<\/Memory>/, 'VirtualHost Memory is element text');

  // The disk census (every few seconds) and the file events of the two objects written.
  const counted = await pollUntil(() => doc('/monitoring/realtime'), (h) => h.VirtualHost[0].FileTotal === 2, { timeoutMs: 20_000, intervalMs: 200 });
  const vh = counted.VirtualHost[0];
  t.equal(vh.FileTotal, 2, 'two objects on disk');
  t.equal(vh.Disk.FileCount, 2);
  t.equal(vh.Disk.Size, 4000, 'their body bytes');
  t.equal(vh.Disk.Storage[0].FileCount, 2, 'all on the one disk');
  t.ok(vh.Memory > 4000 && vh.FileInstance === 2, 'both are in the memory cache too');
  const metrics = async (): Promise<string> => (await fetch(`${api}/metrics`)).text();
  const sample = (text: string, line: string): number | undefined => {
    const l = text.split('\n').find((x) => x.startsWith(`${line} `));
    return l === undefined ? undefined : Number(l.slice(line.length + 1));
  };
  await pollUntil(metrics, (m) => sample(m, 'svc_cache_object_events_total{vhost="m.test",event="create"}') === 2, { timeoutMs: 10_000 });
  t.pass('two Create events');

  // Directory statistics: `/` is the host, `/img/` its three requests.
  const five = await pollUntil(() => doc('/monitoring/average?min=5'),
    (h) => h.VirtualHost[0].ClientTraffic.Traffic.some((e: Obj) => e.Path === '/img/' && e.HttpReqCountSum === 3), { timeoutMs: 10_000 });
  const ct = five.VirtualHost[0].ClientTraffic;
  t.equal(ct.Depth, 1);
  t.equal(ct.Accum, 0);
  t.same(ct.Traffic.map((e: Obj) => [e.Path, e.HttpReqCountSum]), [['/', 3], ['/img/', 3]]);
  t.equal(ct.TrafficCount, 2);

  // A purge and a hard purge: Purge and Erase events; the census sees one object left.
  t.equal((await fetch(`${api}/command/purge?url=m.test/img/a.jpg`)).status, 200);
  t.equal((await fetch(`${api}/command/hardpurge?url=m.test/img/b.jpg`)).status, 200);
  const events = await pollUntil(metrics, (m) => sample(m, 'svc_cache_object_events_total{vhost="m.test",event="erase"}') === 1, { timeoutMs: 10_000 });
  t.equal(sample(events, 'svc_cache_object_events_total{vhost="m.test",event="purge"}'), 1, 'one purged');
  t.equal(sample(events, 'svc_cache_object_events_total{vhost="m.test",event="erase"}'), 1, 'one erased');

  // The management ACL: a caller outside the allowList is refused and counted (ManagementAccess;
  // ServiceAccess is the service's access control of client requests).
  const before = (await doc('/monitoring/realtime')).System.ManagementAccess;
  t.equal(await getFrom('127.0.0.2', apiPort, '/monitoring/realtime'), 401);
  const after = (await doc('/monitoring/realtime')).System.ManagementAccess;
  t.equal(after.Deny, before.Deny + 1, 'the refusal is counted');
  t.equal(after.Allow, before.Allow + 1, 'the allowed request that read the first figures is counted');

  // Sessions and sockets while a request waits for the rest of its answer.
  const held = rawRequest(port, 'GET /slow HTTP/1.1\r\nHost: m.test\r\nConnection: close\r\n\r\n');
  await pollUntil(async () => release, (r) => r !== undefined, { timeoutMs: 10_000 });
  const busy = await pollUntil(() => doc('/monitoring/realtime'),
    (h) => h.VirtualHost[0].ClientSession === 1 && h.VirtualHost[0].OriginActiveSession === 1, { timeoutMs: 10_000 });
  const v = busy.VirtualHost[0];
  t.equal(v.ClientSession, 1, 'one client transaction in progress');
  t.equal(v.ClientActiveSession, 1, 'sending its answer');
  t.equal(v.OriginSession, 1, 'one origin connection open');
  t.equal(v.OriginActiveSession, 1, 'carrying the exchange');
  t.same(v.Session, { Client: 1, ClientActive: 1, Origin: 1, OriginActive: 1, OriginQueued: 0 });
  t.equal(busy.ClientSession, 1, 'the node sums its hosts');
  t.ok(busy.System.ServerSocket.Total >= 1 && busy.System.ServerSocket.Established === 1, 'one client connection with a request in progress');
  t.equal(busy.System.ClientSocket.Total, 1, 'one origin connection');
  t.equal(busy.System.ClientSocket.Established, 1);
  release!();
  t.equal((await held).status, 200);
  const idle = await pollUntil(() => doc('/monitoring/realtime'), (h) => h.VirtualHost[0].ClientSession === 0, { timeoutMs: 10_000 });
  t.equal(idle.VirtualHost[0].ClientActiveSession, 0, 'nothing in progress once it ended');
  // A client that leaves in the middle of its answer leaves nothing in progress behind.
  release = undefined;
  const leaving = net.connect(port, '127.0.0.1', () => leaving.write('GET /slow HTTP/1.1\r\nHost: m.test\r\n\r\n'));
  leaving.on('error', () => undefined);
  await pollUntil(() => doc('/monitoring/realtime'), (h) => h.VirtualHost[0].ClientActiveSession === 1, { timeoutMs: 10_000 });
  leaving.destroy();
  const left = await pollUntil(() => doc('/monitoring/realtime'),
    (h) => h.VirtualHost[0].ClientSession === 0 && h.VirtualHost[0].ClientActiveSession === 0, { timeoutMs: 10_000 });
  t.same([left.VirtualHost[0].ClientSession, left.VirtualHost[0].ClientActiveSession], [0, 0], 'the aborted transaction ended');
  (release as (() => void) | undefined)?.();
  const totals = await metrics();
  t.equal(sample(totals, 'svc_client_connections_accepted_total'), 5, 'five client connections accepted');
  await pollUntil(metrics, (m) => sample(m, 'svc_client_connections_closed_total') === 5, { timeoutMs: 10_000 });
  t.ok((sample(totals, 'svc_origin_connections_opened_total') ?? 0) >= 1, 'origin connections opened are counted');

  // The cache disk's directory disappears: Unmounted, and with no disk left the node is in Emergency.
  await fs.rm(path.join(dir, 'cache', 'disk0'), { recursive: true, force: true });
  const gone = await pollUntil(() => doc('/monitoring/realtime'), (h) => h.State === 'Emergency', { timeoutMs: 10_000 });
  t.equal(gone.System.Storage.Disk[0].Status, 'Unmounted');
  t.equal(gone.State, 'Emergency');
  const license = (await (await fetch(`${api}/get/license`)).json()) as { result: { State: string } };
  t.equal(license.result.State, 'Emergency', '/get/license shows the same State');
});
