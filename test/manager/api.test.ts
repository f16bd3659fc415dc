import http from 'node:http';
import t from 'tap';
import { ok } from '../../lib/manager/envelope.js';
import { MAX_BODY } from '../../lib/manager/node-server.js';
import { freePort } from '../helpers/ports.js';
import { ManagementApi } from '../../lib/manager/index.js';
import { call, fakeRt, makeSetting, startApi, VERSION } from './fixtures/helpers.js';

const allowAll = { allowList: [{ addr: '127.0.0.1' }] };

t.test('vhostslist answers the envelope with the names of the virtual hosts', async (t) => {
  const { api, port } = await startApi(makeSetting(allowAll));
  t.teardown(() => api.close());
  const r = await call(port, '/monitoring/vhostslist');
  t.equal(r.status, 200);
  t.equal(r.headers['content-type'], 'application/json; charset=utf-8');
  t.strictSame(r.json, { version: VERSION, method: 'vhostslist', status: 'OK', result: ['a.example.com', 'b.example.com'], reason: null });
});

t.test('origin status of every host, or of one host, comes as result.origin', async (t) => {
  const { api, port } = await startApi(makeSetting(allowAll));
  t.teardown(() => api.close());
  const all = await call(port, '/monitoring/origin');
  t.equal(all.status, 200);
  t.equal(all.json.method, 'origin');
  t.equal(all.json.status, 'OK');
  const origin = (all.json.result as { origin: Array<Record<string, unknown>> }).origin;
  t.equal(origin.length, 2);
  t.strictSame(origin[0], {
    VirtualHost: 'a.example.com',
    Address: [{ '10.0.0.1:80': 'Active' }],
    Address2: [{ 'origin2.example.com': 'Inactive' }],
    ActiveIP: [{ '10.0.0.1': 0 }],
    InactiveIP: [{ '192.0.2.7': 300 }],
  });
  const one = await call(port, '/monitoring/origin?vhost=b.example.com');
  t.strictSame((one.json.result as { origin: Array<{ VirtualHost: string }> }).origin.map((o) => o.VirtualHost), ['b.example.com']);
});

t.test('origin status of an unknown host is 404 with the reason', async (t) => {
  const { api, port } = await startApi(makeSetting(allowAll));
  t.teardown(() => api.close());
  const r = await call(port, '/monitoring/origin?vhost=nope.example.com');
  t.equal(r.status, 404);
  t.strictSame(r.json, { version: VERSION, method: 'origin', status: 'fail', result: null, reason: 'virtual host not found: nope.example.com' });
  t.equal((await call(port, '/monitoring/origin?vhost=')).status, 400, 'an empty vhost is a bad request');
});

t.test('origin status and resetorigin answer 503 while the RT is not running', async (t) => {
  const rt = fakeRt();
  rt.up = false;
  const { api, port } = await startApi(makeSetting(allowAll), rt);
  t.teardown(() => api.close());
  for (const path of ['/monitoring/origin', '/command/resetorigin?vhost=a.example.com']) {
    const r = await call(port, path);
    t.equal(r.status, 503, path);
    t.equal(r.json.status, 'fail');
    t.equal(r.json.reason, 'RT not running');
  }
  t.strictSame(rt.resets, [], 'nothing was reset');
});

t.test('an RT that stops between the check and the call still gives 503', async (t) => {
  const rt = fakeRt();
  const { api, port } = await startApi(makeSetting(allowAll), {
    ...rt,
    running: () => true,
    originStatus: async () => {
      rt.up = false;
      return rt.originStatus();
    },
  });
  t.teardown(() => api.close());
  const r = await call(port, '/monitoring/origin');
  t.equal(r.status, 503);
  t.equal(r.json.method, 'origin');
});

t.test('resetorigin resets one host, or all hosts without vhost', async (t) => {
  const rt = fakeRt();
  const { api, port } = await startApi(makeSetting(allowAll), rt);
  t.teardown(() => api.close());
  const one = await call(port, '/command/resetorigin?vhost=a.example.com');
  t.equal(one.status, 200);
  t.strictSame(one.json, { version: VERSION, method: 'resetorigin', status: 'OK', result: ['a.example.com'], reason: null });
  const all = await call(port, '/command/resetorigin');
  t.strictSame(all.json.result, ['a.example.com', 'b.example.com']);
  t.strictSame(rt.resets, ['a.example.com', undefined]);
  const unknown = await call(port, '/command/resetorigin?vhost=zzz');
  t.equal(unknown.status, 404);
  t.equal(unknown.json.reason, 'virtual host not found: zzz');
  t.equal(rt.resets.length, 2);
});

t.test('an unknown path is 404 and a known path with another method 405, both enveloped', async (t) => {
  const { api, port } = await startApi(makeSetting(allowAll));
  t.teardown(() => api.close());
  const r = await call(port, '/monitoring/nothing');
  t.equal(r.status, 404);
  t.strictSame(r.json, { version: VERSION, method: '/monitoring/nothing', status: 'fail', result: null, reason: 'Not Found: /monitoring/nothing' });
  t.equal((await call(port, '/')).status, 404);
  const m = await call(port, '/monitoring/vhostslist', { method: 'POST' });
  t.equal(m.status, 405);
  t.equal(m.json.reason, 'Method Not Allowed: use GET');
  t.equal(m.headers.allow, 'GET');
});

t.test('a trailing slash names the same endpoint', async (t) => {
  const { api, port } = await startApi(makeSetting(allowAll));
  t.teardown(() => api.close());
  t.equal((await call(port, '/monitoring/vhostslist/')).status, 200);
});

t.test('a handler that throws answers 500 with the reason, and the server keeps serving', async (t) => {
  const rt = fakeRt();
  const { api, port } = await startApi(makeSetting(allowAll), {
    ...rt,
    vhosts: () => {
      throw new Error('bridge broken');
    },
  });
  t.teardown(() => api.close());
  const r = await call(port, '/monitoring/vhostslist');
  t.equal(r.status, 500);
  t.strictSame(r.json, { version: VERSION, method: 'vhostslist', status: 'fail', result: null, reason: 'Internal error: bridge broken' });
  t.equal((await call(port, '/monitoring/ssl?cs=HIGH')).status, 200);
});

t.test('close() frees the plain port', async (t) => {
  const { api, port } = await startApi(makeSetting(allowAll));
  t.equal(api.httpPort, port);
  await api.close();
  await t.rejects(call(port, '/monitoring/vhostslist'), { code: 'ECONNREFUSED' });
  t.equal(api.httpPort, undefined);
});

t.test('start() refuses a second start and a bad allowList address', async (t) => {
  const { api } = await startApi(makeSetting(allowAll));
  t.teardown(() => api.close());
  await t.rejects(api.start(), /already started/);
  const bad = makeSetting(allowAll);
  bad.env.management.api.allowList = [{ addr: '300.1.1.1' }];
  const api2 = new ManagementApi({ getSetting: () => bad, version: VERSION, rt: fakeRt() });
  await t.rejects(api2.start(), /bad allowList address "300.1.1.1"/);
  t.throws(() => api.applySetting(bad), /bad allowList address/);
});

t.test('a body over the API limit is refused with 413 in the route\'s envelope, before it is read', async (t) => {
  const setting = makeSetting(allowAll);
  setting.env.management.api.port = await freePort();
  let read = 0;
  const api = new ManagementApi({
    getSetting: () => setting, version: VERSION, rt: fakeRt(), host: '127.0.0.1',
    extraRoutes: [{ method: 'POST', path: '/command/purge', name: 'purge', group: 'query', handler: async (req) => { read = (await req.body()).length; return ok(VERSION, 'purge', 'query', null); } }],
  });
  await api.start();
  const port = api.httpPort!;
  t.teardown(() => api.close());
  // Declared too large: the answer comes without the body being sent.
  const r = await new Promise<{ status: number; json: Record<string, unknown> }>((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method: 'POST', path: '/command/purge', headers: { 'content-type': 'application/json', 'content-length': String(MAX_BODY + 1) } }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (c: string) => { text += c; }).on('end', () => resolve({ status: res.statusCode!, json: JSON.parse(text) as Record<string, unknown> }));
    });
    req.on('error', reject);
    req.write('{');
  });
  t.equal(r.status, 413);
  t.equal(r.json.status, 'fail');
  t.match(r.json.reason, /^Payload Too Large/);
  t.equal(read, 0, 'the handler got no body');
  t.equal((await call(port, '/monitoring/vhostslist')).status, 200, 'the server keeps serving');
});
