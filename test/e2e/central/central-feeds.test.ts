// Black-box: a node driven by a scripted central server through apiPolling feeds. A setting
// message's package is applied as an upload, a checkout notification deploys the local file, a
// purge message runs through the invalidation service, and each gets its feedback body; the
// first feedback is /_sys_/bootup, API changes report /_api_/..., heartbeats arrive.
import fs from 'node:fs/promises';
import t from 'tap';
import { TestOrigin } from '../../helpers/origin.js';
import { freePort } from '../../helpers/ports.js';
import { call, fetchHost, until } from '../../lifecycle/fixtures/node.js';
import { CentralServer, startCentralNode } from './central-server.js';

const central = await new CentralServer().start();
const origin = await new TestOrigin().start();
origin.otherwise((req, res) => {
  const body = `origin ${req.url}`;
  res.writeHead(200, { 'cache-control': 'max-age=600', 'content-type': 'text/plain', 'content-length': Buffer.byteLength(body) });
  res.end(body);
});
const port = await freePort();
const host = (name: string) => ({ name, listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}`] } });
const api = { url: central.url('/feedback/setting'), timeout: 5 };
const server = await startCentralNode([host('p.com')], {
  features: {
    setting: { enable: true, feed: { type: 'apiPolling', info: { url: central.url('/feed/setting'), schedule: '* * * * * *', timeout: 5 } }, feedback: { type: 'api', info: api } },
    purge: {
      enable: true, workerCount: 2,
      feed: { type: 'apiPolling', info: { url: central.url('/feed/purge'), schedule: '* * * * * *', timeout: 5 } },
      feedback: { type: 'api', info: { url: central.url('/feedback/purge'), timeout: 5 } },
    },
    heartbeat: { enable: true, feedback: { type: 'apiPolling', info: { url: central.url('/heartbeat'), schedule: '* * * * * *', timeout: 5 } } },
  },
});
t.teardown(async () => { await server.stop(); await central.stop(); await origin.stop(); });

const running = async (): Promise<Record<string, any>> => (await call(server.apiPort, '/setting/setting.json')).json as Record<string, any>;
const feedbackWith = (event: string, n = 1) => until(async () => {
  const list = central.posts('/feedback/setting').filter((m) => m.action?.event === event);
  return list.length >= n ? list[n - 1] : undefined;
}, `setting feedback ${event} #${n}`, 20_000);

t.test('the first setting feedback after the start is /_sys_/bootup with the node and the loaded setting', async (t) => {
  const first = await until(async () => central.posts('/feedback/setting')[0], 'a first feedback', 20_000);
  t.match(first, {
    messageVer: '1', action: { event: '/_sys_/bootup' },
    node: { productVer: String, settingVer: /^[0-9a-f]{32}$/, hostname: String, iplist: Array },
    parameters: [{ result: { method: '/_sys_/bootup', status: 'ok', metaVersion: '1' } }],
  });
  t.same(first.setting.hosting.map((h: { name: string }) => h.name), ['p.com']);
});

t.test('a setting message is downloaded and applied as an upload, with its feedback', async (t) => {
  const next = await running();
  next.hosting.push(host('q.com'));
  central.publish('/pkg/next.json', { body: JSON.stringify(next), lastModified: 'Mon, 23 Nov 2026 10:00:00 GMT' });
  central.publish('/feed/setting', {
    body: JSON.stringify({ messageVer: '1', action: { api: '/setting/upload' }, parameters: [{ url: central.url('/pkg/next.json') }], userdata: { job: 7 } }),
    lastModified: 'Tue, 24 Nov 2026 10:00:00 GMT',
  });
  const fb = await feedbackWith('/env/management/server/apiPolling/setting');
  t.match(fb, {
    messageVer: '1', userdata: { job: 7 }, action: { api: '/setting/upload', event: '/env/management/server/apiPolling/setting' },
    parameters: [{ url: central.url('/pkg/next.json'), result: { method: '/setting/upload', status: 'ok', lastModified: 'Mon, 23 Nov 2026 10:00:00 GMT', metaVersion: '1' } }],
  });
  t.same(fb.setting.hosting.map((h: { name: string }) => h.name), ['p.com', 'q.com'], 'uploadSetting: the loaded setting.json');
  t.equal((await fetchHost(port, 'q.com', '/x')).status, 200, 'the new host serves');
  t.same(JSON.parse(await fs.readFile(server.settingPath, 'utf8')).hosting.length, 2, 'setting.json was written as by an upload');
  // The next polls carry the feed's Last-Modified and the loaded meta.version; 304 applies nothing again.
  const polls = await until(async () => {
    const g = central.gets('/feed/setting').filter((s) => s.headers['if-modified-since'] === 'Tue, 24 Nov 2026 10:00:00 GMT');
    return g.length >= 2 ? g : undefined;
  }, 'conditional polls');
  t.equal(polls[0]!.headers['x-svc-setting-meta-version'], '1');
  t.equal(central.posts('/feedback/setting').filter((m) => m.action.event === '/env/management/server/apiPolling/setting').length, 1);
});

t.test('a package the node refuses is reported with the reason and changes nothing', async (t) => {
  const before = await running();
  central.publish('/pkg/bad.json', { body: JSON.stringify({ ...before, hosting: [{ name: 'bad.com', origin: { address: ['not an address'] } }] }), lastModified: 'Mon, 23 Nov 2026 11:00:00 GMT' });
  central.publish('/feed/setting', {
    body: JSON.stringify({ messageVer: '1', action: { api: '/setting/upload' }, parameters: [{ url: central.url('/pkg/bad.json') }] }),
    lastModified: 'Tue, 24 Nov 2026 11:00:00 GMT',
  });
  const fb = await feedbackWith('/env/management/server/apiPolling/setting', 2);
  t.match(fb.parameters[0].result.status, /origin\.address/);
  t.not(fb.parameters[0].result.status, 'ok');
  t.same((await running()).hosting.map((h: { name: string }) => h.name), ['p.com', 'q.com']);
});

t.test('a checkout notification deploys the local setting.json', async (t) => {
  const local = JSON.parse(await fs.readFile(server.settingPath, 'utf8')) as Record<string, any>;
  local.hosting.push(host('r.com'));
  await fs.writeFile(server.settingPath, JSON.stringify(local));
  central.publish('/feed/setting', { body: JSON.stringify({ messageVer: '1', action: { api: '/setting/deploy/checkout' } }), lastModified: 'Tue, 24 Nov 2026 12:00:00 GMT' });
  const fb = await feedbackWith('/env/management/server/apiPolling/setting', 3);
  t.match(fb, { action: { api: '/setting/deploy/checkout' }, parameters: [{ result: { method: '/setting/deploy/checkout', status: 'ok' } }] });
  t.equal((await fetchHost(port, 'r.com', '/y')).status, 200);
});

t.test('a setting uploaded through the API is reported as /_api_/setting/upload', async (t) => {
  const next = await running();
  next.hosting = next.hosting.filter((h: { name: string }) => h.name !== 'r.com');
  const r = await call(server.apiPort, '/setting/upload', { body: JSON.stringify(next) });
  t.equal(r.status, 200, r.text);
  const fb = await feedbackWith('/_api_/setting/upload');
  t.match(fb, { action: { api: '/setting/upload' }, parameters: [{ result: { status: 'ok' } }] });
});

t.test('a setting reloaded from the command line (SIGHUP: systemctl reload, kill -HUP) is reported as /_sys_/cli/reload, not as an API call', async (t) => {
  const local = await running();
  local.hosting.push(host('s.com'));
  await fs.writeFile(server.settingPath, JSON.stringify(local));
  const before = central.posts('/feedback/setting').length;
  server.signal('SIGHUP');
  const fb = await until(async () => central.posts('/feedback/setting').slice(before)[0], 'the feedback of the reload', 20_000);
  t.match(fb, { action: { api: '/setting/deploy/local', event: '/_sys_/cli/reload' }, parameters: [{ result: { status: 'ok' } }] });
});

t.test('a purge message runs each URL through the invalidation service and reports count, size and time', async (t) => {
  t.equal((await fetchHost(port, 'p.com', '/a')).status, 200);
  t.equal((await fetchHost(port, 'p.com', '/a')).cache, 'TCP_HIT');
  const fetched = origin.count('/a');
  central.publish('/feed/purge', {
    body: JSON.stringify({ messageVer: '1', action: { api: '/command/purge' }, parameters: [{ url: 'p.com/a' }, { url: 'nohost.example/x' }], userdata: 'u1' }),
    lastModified: 'Tue, 24 Nov 2026 13:00:00 GMT',
  });
  const fb = await until(async () => central.posts('/feedback/purge')[0], 'purge feedback', 20_000);
  t.match(fb, { messageVer: '1', userdata: 'u1', node: { hostname: String }, action: { api: '/command/purge', event: '/env/management/server/apiPolling/purge' } });
  t.match(fb.parameters[0], { url: 'p.com/a', result: { method: '/command/purge', status: 'OK', result: { count: 1, size: Number, time: Number } } });
  t.ok(fb.parameters[0].result.result.size > 0);
  t.match(fb.parameters[1], { url: 'nohost.example/x', result: { status: /unknown virtual host/, result: { count: 0 } } });
  t.not((await fetchHost(port, 'p.com', '/a')).cache, 'TCP_HIT', 'the purged object is fetched again');
  t.equal(origin.count('/a'), fetched + 1);
});

t.test('heartbeats arrive as {messageVer, node} on the schedule', async (t) => {
  const beats = await until(async () => (central.posts('/heartbeat').length >= 2 ? central.posts('/heartbeat') : undefined), 'two heartbeats', 20_000);
  t.match(beats[0], { messageVer: '1', node: { productVer: String, hostname: String, iplist: Array } });
});

t.test('every outbound call has a line in the info log', async (t) => {
  const log = await fs.readFile(`${server.dir}/svclog/info.log`, 'utf8');
  for (const what of ['apiPolling feed', 'setting feedback', 'purge feedback', 'heartbeat', 'setting package download']) t.match(log, `central management: ${what}`);
});
