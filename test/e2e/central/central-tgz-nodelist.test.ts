// Black-box: a tgzPolling feed whose answer is the setting package itself, and the deprecated
// node list: EC2 DescribeInstances (a scripted Query API answering EC2 XML, two pages) feeding the
// run-time origin.address of a host, without touching setting.json, with its api feedback.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import * as tar from 'tar';
import t from 'tap';
import { TestOrigin } from '../../helpers/origin.js';
import { freePort } from '../../helpers/ports.js';
import { call, fetchHost, until } from '../../lifecycle/fixtures/node.js';
import { CentralServer, startCentralNode } from './central-server.js';

const central = await new CentralServer().start();
const origin = await new TestOrigin().start();
const port = await freePort();

// The EC2 stand-in: first page without a match (a stopped and an other-tagged instance), the
// second page (NextToken) with the running instance once `running` is set.
let running = false;
const instance = (id: string, code: number, name: string, ip: string, role: string): string =>
  `<item><instanceId>${id}</instanceId><instanceState><code>${code}</code><name>${name}</name></instanceState>`
  + `<privateIpAddress>${ip}</privateIpAddress><tagSet><item><key>role</key><value>${role}</value></item></tagSet></item>`;
const page = (items: string, next?: string): string =>
  `<?xml version="1.0" encoding="UTF-8"?><DescribeInstancesResponse xmlns="http://ec2.amazonaws.com/doc/2016-11-15/"><requestId>r</requestId>`
  + `<reservationSet><item><reservationId>r-1</reservationId><instancesSet>${items}</instancesSet></item></reservationSet>`
  + `${next === undefined ? '' : `<nextToken>${next}</nextToken>`}</DescribeInstancesResponse>`;
const ec2 = await new TestOrigin().start();
ec2.otherwise((req, res) => {
  const form = new URLSearchParams(req.body.toString());
  const xml = form.get('NextToken') === 'p2'
    ? page(running ? instance('i-1', 16, 'running', '127.0.0.1', 'edge-origin') : '')
    : page(instance('i-2', 80, 'stopped', '127.0.0.5', 'edge-origin') + instance('i-3', 16, 'running', '127.0.0.6', 'other'), 'p2');
  res.writeHead(200, { 'content-type': 'text/xml' });
  res.end(xml);
});

const hosts = [
  { name: 'p.com', listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}`] } },
  // Nothing listens there: only the node list makes this host reach its origin.
  { name: 'n.com', listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.2:${origin.port}`] }, functions: { network: { http: { backEnd: { session: { connectTimeout: 1 } } } } } },
];
const server = await startCentralNode(hosts, {
  connection: [{ name: 'aws', type: 'cloudAsdk3', info: { accessKeyId: 'AKIDTEST', secretAccessKey: 'secret', region: 'us-east-1', endpoint: `http://127.0.0.1:${ec2.port}/` } }],
  features: {
    setting: {
      enable: true, feed: { type: 'tgzPolling', info: { url: central.url('/feed/package.tgz'), schedule: '* * * * * *', timeout: 5 } },
      feedback: { type: 'api', info: { url: central.url('/feedback/setting'), timeout: 5 }, uploadSetting: false },
    },
    nodelist: {
      enable: true, feed: { type: 'cloudAsdk3', info: { connect: 'aws', tag: 'role=edge-origin;', schedule: '* * * * * *' } },
      feedback: { type: 'setting;api;', info: { hosting: [{ name: 'n.com', field: 'origin.address' }], url: central.url('/feedback/nodelist'), timeout: 5 } },
    },
  },
});
t.teardown(async () => { await server.stop(); await central.stop(); await origin.stop(); await ec2.stop(); });

t.test('a tgzPolling answer is the package: it is applied as an upload and reported', async (t) => {
  const next = (await call(server.apiPort, '/setting/setting.json')).json as Record<string, any>;
  next.hosting.push({ name: 't.com', listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}`] } });
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'pkg-'));
  t.teardown(() => fs.rm(dir, { recursive: true, force: true }));
  await fs.writeFile(path.join(dir, 'setting.json'), JSON.stringify(next));
  const chunks: Buffer[] = [];
  for await (const c of tar.create({ gzip: true, cwd: dir, portable: true }, ['setting.json'])) chunks.push(c as Buffer);
  central.publish('/feed/package.tgz', { body: Buffer.concat(chunks), lastModified: 'Tue, 24 Nov 2026 09:00:00 GMT', type: 'application/x-compressed' });
  const fb = await until(async () => central.posts('/feedback/setting').find((m) => m.action.event === '/env/management/server/tgzPolling/setting'), 'tgz feedback', 20_000);
  t.match(fb, {
    action: { api: '/setting/upload' }, setting: null,
    parameters: [{ url: central.url('/feed/package.tgz'), result: { status: 'ok', method: '/setting/upload', lastModified: 'Tue, 24 Nov 2026 09:00:00 GMT' } }],
  });
  t.equal((await fetchHost(port, 't.com', '/t')).status, 200);
});

t.test('the node list swaps the origin address of the listed host at run time, setting.json unchanged', async (t) => {
  t.equal((await fetchHost(port, 'n.com', '/before')).status >= 500, true, 'the configured address does not answer');
  const fileBefore = await fs.readFile(server.settingPath, 'utf8');
  running = true;
  const fb = await until(async () => central.posts('/feedback/nodelist')[0], 'node list feedback', 20_000);
  t.match(fb, {
    messageVer: '1', node: { hostname: String }, nodelist: ['127.0.0.1'],
    hosting: [{ name: 'n.com', updated: { field: 'origin.address', values: [`127.0.0.1:${origin.port}`] } }],
  });
  const ok = await until(async () => ((await fetchHost(port, 'n.com', '/after')).status === 200 ? true : undefined), 'n.com served through the listed instance');
  t.ok(ok);
  t.equal(await fs.readFile(server.settingPath, 'utf8'), fileBefore, 'setting.json is not touched');
  const sent = ec2.seen[0]!;
  t.match(String(sent.headers.authorization), /^AWS4-HMAC-SHA256 Credential=AKIDTEST\/\d{8}\/us-east-1\/ec2\/aws4_request/);
  t.match(sent.body.toString(), /Action=DescribeInstances/);
  t.equal(central.posts('/feedback/nodelist').length, 1, 'an unchanged list is not reported again');
});
