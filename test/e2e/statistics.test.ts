// Black-box: a known mix of requests through a 2-worker node, then what an operator reads:
// /monitoring/average (JSON and XML), /metrics on the management port and on the statistics
// collector, promtool's verdict on the exposition, and the counts across a worker crash.
import { execFileSync, spawnSync } from 'node:child_process';
import t from 'tap';
import { XMLParser } from 'fast-xml-parser';
import { TestOrigin } from '../helpers/origin.js';
import { freePort } from '../helpers/ports.js';
import { rawRequest } from '../helpers/raw-client.js';
import { baseSetting, primaryPids, startWithSetting, writeSetting } from '../helpers/server.js';
import { startPrometheus } from '../helpers/prometheus.js';
import { consecutiveFreePorts } from '../helpers/ports.js';
import { pollUntil, waitFor as waitUntil } from '../helpers/wait.js';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

const get = async (url: string): Promise<{ status: number; type: string; body: string }> => {
  const r = await fetch(url);
  return { status: r.status, type: r.headers.get('content-type') ?? '', body: await r.text() };
};

/** The value of a metric line (labels written exactly as given), or undefined. */
function metric(text: string, name: string, labels: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${name}{${labels}} `));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

/** Polls until the condition holds on the fetched text (deltas reach the primary once a second). */
async function waitFor(url: string, cond: (body: string) => boolean, what: string, timeoutMs = 10_000): Promise<string> {
  const body = await pollUntil(async () => (await get(url)).body, cond, { timeoutMs, intervalMs: 50 });
  if (!cond(body)) throw new Error(`not seen within ${timeoutMs} ms: ${what}\n${body.slice(0, 2000)}`);
  return body;
}

t.test('counts, bytes and hit ratios of a known mix match what was sent, in every form', async (t) => {
  const origin = await new TestOrigin().start();
  const body = 'x'.repeat(1000);
  origin.on('/obj', (_q, res) => { res.writeHead(200, { 'cache-control': 'max-age=600', 'content-length': 1000 }); res.end(body); });
  origin.on('/missing', (_q, res) => { res.writeHead(404, { 'cache-control': 'no-store', 'content-length': 2 }); res.end('no'); });
  origin.on('/boom', (_q, res) => { res.writeHead(502, { 'cache-control': 'no-store', 'content-length': 4 }); res.end('boom'); });
  const port = await freePort();
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'svc-stats-'));
  const basePort = await consecutiveFreePorts(2);
  const apiPort = await freePort();
  const statsPort = await freePort();
  const setting = baseSetting([{ name: 'h.test', listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}`] } }],
    basePort, { workers: 2, balance: 'hash', extra: { meta: { group: 'edge-a' } } }, apiPort) as { env: { management: { cluster: { stats: unknown } } } };
  setting.env.management.cluster.stats = { enable: true, listen: `127.0.0.1:${statsPort}` };
  const server = await startWithSetting(dir, await writeSetting(dir, setting), basePort, {}, apiPort);
  t.teardown(async () => { await server.stop(); await origin.stop(); });

  const send = (p: string, host = 'h.test') => rawRequest(port, `GET ${p} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
  let received = 0;
  const statuses: number[] = [];
  const one = async (p: string, host?: string): Promise<void> => {
    const r = await send(p, host);
    received += Buffer.byteLength(r.text, 'latin1');
    statuses.push(r.status);
  };
  // One miss then five hits of /obj, three 404s and two 502s from the origin, one unknown host.
  for (let i = 0; i < 6; i++) await one('/obj');
  for (let i = 0; i < 3; i++) await one('/missing');
  for (let i = 0; i < 2; i++) await one('/boom');
  await one('/x', 'nobody.test');
  t.same(statuses, [200, 200, 200, 200, 200, 200, 404, 404, 404, 502, 502, 404]);

  const collector = `http://127.0.0.1:${statsPort}`;
  const metrics = await waitFor(`${collector}/metrics`, (m) => {
    const host = metric(m, 'svc_client_requests_total', 'group="edge-a",vhost="h.test"') ?? 0;
    const none = metric(m, 'svc_client_requests_total', 'group="edge-a",vhost="-"') ?? 0;
    return host + none === 12;
  }, 'twelve requests in /metrics');
  const m = (name: string, labels: string) => metric(metrics, name, `group="edge-a",${labels}`);
  t.equal(m('svc_client_requests_total', 'vhost="h.test"'), 11, 'the host took eleven');
  t.equal(m('svc_client_requests_total', 'vhost="-"'), 1, 'the unknown host is counted for the node only');
  t.equal(m('svc_client_responses_total', 'vhost="h.test",class="2xx"'), 6);
  t.equal(m('svc_client_responses_total', 'vhost="h.test",class="4xx"'), 3);
  t.equal(m('svc_client_responses_total', 'vhost="h.test",class="5xx"'), 2);
  t.equal(m('svc_client_cache_results_total', 'vhost="h.test",result="TCP_HIT"'), 5);
  t.equal(m('svc_client_cache_results_total', 'vhost="h.test",result="TCP_MISS"'), 6);
  t.equal(m('svc_origin_requests_total', 'vhost="h.test"'), 6, 'the origin saw one /obj, three /missing, two /boom');
  t.equal(origin.seen.length, 6);
  t.equal(m('svc_origin_responses_total', 'vhost="h.test",class="5xx"'), 2);
  t.equal(m('svc_client_response_time_seconds_count', 'vhost="h.test"'), 11);
  t.equal(m('svc_client_response_time_seconds_bucket', 'vhost="h.test",le="+Inf"'), 11);
  const sent = (m('svc_client_sent_bytes_total', 'vhost="h.test"') ?? 0) + (m('svc_client_sent_bytes_total', 'vhost="-"') ?? 0);
  t.equal(sent, received, 'bytes sent to clients = bytes the clients received');

  const check = spawnSync('promtool', ['check', 'metrics'], { input: metrics });
  t.equal(check.status, 0, `promtool accepts the exposition: ${check.stdout}${check.stderr}`);
  t.equal(`${check.stdout}${check.stderr}`.trim(), '', 'without a warning');
  // The conventional families, one series per process of the node; the license apart from svc_state.
  for (const role of ['primary', 'worker-0', 'worker-1']) {
    t.ok((m('process_cpu_seconds_total', `role="${role}"`) ?? 0) > 0, `process_cpu_seconds_total of ${role}`);
    t.ok((m('process_start_time_seconds', `role="${role}"`) ?? 0) > Date.now() / 1000 - 600, `process_start_time_seconds of ${role}`);
  }
  t.match(metrics, /^svc_build_info\{group="edge-a",version="[^"]+",node_version="[^"]+"\} 1$/m);
  t.equal(m('svc_license_info', 'status="None"'), 1, 'no license file: status None');
  t.equal(m('svc_state', 'state="Healthy"'), 1, 'a node without a license serves: Healthy');

  // A real Prometheus server scrapes the collector and answers a PromQL query with the count.
  const prom = await startPrometheus(dir, `127.0.0.1:${statsPort}`);
  t.teardown(() => prom.stop());
  const scraped = await pollUntil(() => prom.query('sum(svc_client_requests_total{group="edge-a"})'), (v) => v === 12,
    { timeoutMs: 30_000, intervalMs: 200 });
  t.equal(scraped, 12, 'Prometheus answers sum(svc_client_requests_total) with the twelve requests');
  await prom.stop();

  // The management port answers the same /metrics behind the ACL.
  const api = `http://127.0.0.1:${apiPort}`;
  const viaApi = await get(`${api}/metrics`);
  t.equal(viaApi.status, 200);
  t.match(viaApi.type, /^text\/plain; version=0\.0\.4/);
  t.equal(metric(viaApi.body, 'svc_client_requests_total', 'group="edge-a",vhost="h.test"'), 11);

  const avg5 = JSON.parse((await get(`${api}/monitoring/average?min=5`)).body) as { Host: Record<string, any> };
  const h = avg5.Host;
  t.equal(h.State, 'Inactive', 'no license is installed: Inactive');
  t.same(h.HttpCountSum, {
    OriginReqCount: 6, OriginResTotalCount: 6, OriginRes2xxCount: 1, OriginRes3xxCount: 0, OriginRes4xxCount: 3, OriginRes5xxCount: 2,
    ClientReqCount: 12, ClientResTotalCount: 12, ClientRes2xxCount: 6, ClientRes3xxCount: 0, ClientRes4xxCount: 4, ClientRes5xxCount: 2,
  });
  t.equal(h.HttpRequestHitSum.TCP_HIT, 5);
  const vh = h.VirtualHost.find((v: { Name: string }) => v.Name === 'h.test');
  t.equal(vh.RequestHitRatio, Math.round((5 / 11) * 10000), 'five hits of eleven, in 0.01 %');
  const traffic = vh.ClientTraffic.Traffic[0];
  t.equal(traffic.Path, '/');
  t.equal(traffic.HttpReqCountSum, 11);
  t.equal(traffic.Response.Res5xx.CountSum, 2);
  t.equal(traffic.RequestHitSum.TCP_HIT, 5);
  t.ok(h.System.CPU.Idle >= 0 && h.System.Mem.Free > 0 && h.System.SystemLoadAverage.Min1 >= 0, 'system figures are there');
  t.equal(h.System.Storage.Disk[0].Status, 'Normal');

  const avg1 = JSON.parse((await get(`${api}/monitoring/average?min=1`)).body) as { Host: Record<string, any> };
  t.equal(Math.round(avg1.Host.ClientReqCount * 60), 12, 'the 1-minute average is the count per second over 60 s');
  t.equal(Math.round(avg1.Host.ClientOutbound * 60), received);
  t.notOk('HttpCountSum' in avg1.Host, 'the sums are in the 5-minute statistics only');
  const per60 = (v: number): number => Math.round(v * 60);
  t.equal(per60(avg1.Host.ClientRes2xxCount), 6);
  t.equal(per60(avg1.Host.ClientRes4xxCount), 4);
  t.equal(per60(avg1.Host.ClientRes5xxCount), 2);
  t.equal(per60(avg1.Host.OriginReqCount), 6);
  t.equal(per60(avg1.Host.OriginRes5xxCount), 2);
  t.equal(avg1.Host.RequestHitRatio, Math.round((5 / 12) * 10000), 'five hits of twelve at the node');
  t.equal(avg1.Host.ByteHitRatio, Math.round(((received - avg1.Host.OriginInbound * 60) / received) * 10000), '(client out - origin in) / client out');
  const vh1 = avg1.Host.VirtualHost.find((v: { Name: string }) => v.Name === 'h.test');
  t.equal(per60(vh1.ClientReqCount), 11);
  t.equal(vh1.RequestHitRatio, Math.round((5 / 11) * 10000));
  t.equal(per60(vh1.ClientHttpReqDenied), 0);
  t.equal(avg1.Host.ClientSession, 0, 'nothing in progress');
  t.equal(avg1.Host.System.ServerSocket.Established, 0, 'no client connection with a request in progress');
  t.equal(metric(metrics, 'svc_client_connections_accepted_total', 'group="edge-a"'), 12,
    'twelve client connections (the hand-offs between the workers are not client connections)');
  const xml1 = await get(`${api}/monitoring/average?min=1&type=XML`);
  const p1 = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '' }).parse(xml1.body) as { Host: Record<string, any> };
  t.equal(per60(Number(p1.Host.ClientReqCount)), 12, 'the 1-minute XML carries the same values');
  t.equal(Number(p1.Host.RequestHitRatio), avg1.Host.RequestHitRatio);
  t.equal(per60(Number(p1.Host.VirtualHost.ClientRes5xxCount)), 2);

  const xml = await get(`${api}/monitoring/average?min=5&type=XML`);
  t.match(xml.type, /^application\/xml/);
  const parsed = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '' }).parse(xml.body) as { Host: Record<string, any> };
  t.equal(Number(parsed.Host.HttpCountSum.ClientReqCount), 12, 'the XML carries the same sums');
  t.equal(Number(parsed.Host.HttpRequestHitSum.TCP_HIT), 5);
  t.equal(parsed.Host.State, 'Inactive', 'scalars are attributes');
  t.equal(Number(parsed.Host.VirtualHost.ClientTraffic.Traffic.HttpReqCountSum), 11);
  t.ok('EQ' in parsed.Host.System, 'EQ is element text');

  const rt = JSON.parse((await get(`${api}/monitoring/realtime`)).body) as { Host: Record<string, any> };
  for (const k of ['Version', 'Name', 'State', 'Uptime', 'OriginReqCount', 'ClientReqCount', 'ClientRes5xxTimeComplete', 'RequestHitRatio', 'ByteHitRatio', 'System', 'VirtualHost']) {
    t.ok(k in rt.Host, `realtime has ${k}`);
  }
  t.equal((await get(`${api}/monitoring/average?min=2`)).status, 400, 'min is 1 or 5');
  t.equal((await get(`${collector}/graph/cpu_day.png`)).status, 404, 'the collector answers only the statistics paths');

  // A worker crash: its counts stay, the replacement adds only what it counts.
  const workers = execFileSync('ps', ['-o', 'pid=', '--ppid', String(primaryPids(server)[0])]).toString().trim().split(/\s+/).map(Number);
  process.kill(workers[0]!, 'SIGKILL');
  await server.waitForLog((l) => l.msg === 'worker died; replacing it');
  const nodeRequests = (text: string): number =>
    (metric(text, 'svc_client_requests_total', 'group="edge-a",vhost="h.test"') ?? 0) + (metric(text, 'svc_client_requests_total', 'group="edge-a",vhost="-"') ?? 0);
  t.equal(nodeRequests((await get(`${collector}/metrics`)).body), 12, 'nothing lost or added by the crash');
  // Requests (at most 200) until the replacement serves too, then the total must be exactly 12 +
  // what was sent.
  let more = 0;
  const seen: number[] = [];
  const replaced = await waitUntil(async () => {
    const r = await send('/obj');
    if (r.status === 200) more++;
    seen.push(nodeRequests((await get(`${collector}/metrics`)).body));
    const serving = execFileSync('ps', ['-o', 'pid=', '--ppid', String(server.proc.pid)]).toString().trim().split(/\s+/);
    return (more >= 4 && serving.length === 2 && !serving.includes(String(workers[0]))) || more >= 200;
  }, { timeoutMs: 15_000, intervalMs: 20 });
  t.ok(replaced, 'the replacement worker is up');
  await waitFor(`${collector}/metrics`, (b) => nodeRequests(b) === 12 + more, `${12 + more} requests after the restart`);
  t.ok(seen.every((n, i) => i === 0 || n >= seen[i - 1]!), 'the total never went backwards');
});
