// The other repository types against real or stand-in receivers: cloudC (a stand-in of the
// OAuth token endpoint and the Cloud Storage JSON API that checks the service-account JWT with
// the public key and the upload's shape), logagent (an HTTP receiver) with the export filter,
// and statsd (the real statsd daemon from npm).
import { generateKeyPairSync, verify } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import t from 'tap';
import { startStatsd } from '../helpers/statsd.js';
import { until } from '../helpers/wait.js';
import { shipFixture } from './fixtures/ship.js';

interface Received { method: string; url: string; headers: http.IncomingHttpHeaders; body: Buffer }

async function receiver(t: { teardown(fn: () => void): void }, answer: (r: Received, res: http.ServerResponse) => void): Promise<{ url: string; got: Received[] }> {
  const got: Received[] = [];
  const server = http.createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (d: Buffer) => parts.push(d));
    req.on('end', () => {
      const r = { method: req.method!, url: req.url!, headers: req.headers, body: Buffer.concat(parts) };
      got.push(r);
      answer(r, res);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => server.close());
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, got };
}

t.test('cloudC: a service-account JWT signed RS256 buys a token, then the unit is a media upload to the bucket', async (t) => {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const stand = await receiver(t, (r, res) => {
    if (r.url === '/token') {
      const form = new URLSearchParams(r.body.toString());
      const [h, c, sig] = form.get('assertion')!.split('.');
      const ok = form.get('grant_type') === 'urn:ietf:params:oauth:grant-type:jwt-bearer' &&
        verify('sha256', Buffer.from(`${h}.${c}`), publicKey, Buffer.from(sig!, 'base64url'));
      res.statusCode = ok ? 200 : 400;
      return void res.end(JSON.stringify(ok ? { access_token: 'ya29.test', expires_in: 3600, token_type: 'Bearer' } : { error: 'invalid_grant' }));
    }
    res.statusCode = r.headers.authorization === 'Bearer ya29.test' ? 200 : 401;
    res.end('{}');
  });
  const f = shipFixture(t);
  const keyFile = path.join(f.dir, 'gcs.json');
  fs.writeFileSync(keyFile, JSON.stringify({
    type: 'service_account', project_id: 'p', private_key_id: 'kid-1', client_email: 'edge@p.iam.gserviceaccount.com',
    private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }), token_uri: `${stand.url}/token`,
  }));
  process.env.STORAGE_EMULATOR_HOST = stand.url;
  t.teardown(() => { delete process.env.STORAGE_EMULATOR_HOST; });
  f.configure({ type: 'cloudC-storage', path: '/edge-bucket/{domain}/{timestamp}.log.gz', compression: { enable: true }, endpoint: { credential: 'gcs.json' } });
  await f.roll(['g1', 'g2']);
  await f.scheduler.fire('r');
  t.equal(f.attempts()[0]?.error, null);
  const [token, upload] = stand.got;
  const [h, c] = new URLSearchParams(token!.body.toString()).get('assertion')!.split('.');
  t.same(JSON.parse(Buffer.from(h!, 'base64url').toString()), { alg: 'RS256', typ: 'JWT', kid: 'kid-1' });
  const claims = JSON.parse(Buffer.from(c!, 'base64url').toString()) as Record<string, unknown>;
  t.match(claims, { iss: 'edge@p.iam.gserviceaccount.com', aud: `${stand.url}/token`, scope: 'https://www.googleapis.com/auth/devstorage.read_write' });
  t.equal((claims.exp as number) - (claims.iat as number), 3600);
  t.equal(upload!.method, 'POST');
  t.equal(upload!.url, `/upload/storage/v1/b/edge-bucket/o?uploadType=media&name=${encodeURIComponent('www.example.com/20261124090100.log.gz')}`);
  t.equal(upload!.headers['content-type'], 'application/gzip');
  t.equal(upload!.headers['content-length'], String(upload!.body.length));
  t.equal(gunzipSync(upload!.body).toString(), 'g1\ng2\n');
});

t.test('logagent: the exported lines of a unit are pushed to the url, gzipped when the repository compresses', async (t) => {
  const agent = await receiver(t, (_r, res) => res.end());
  const f = shipFixture(t);
  f.configure({ type: 'logagent', path: '{domain}/{logtype}', compression: { enable: true }, endpoint: { url: `${agent.url}/push`, exports: { enable: true, matchingList: [' 5\\d\\d ', 'POST'] } } });
  await f.roll(['#Fields: a b', 'GET / 200 x', 'GET /e 503 x', 'POST /f 200 x', 'GET /n 404 x']);
  await f.scheduler.fire('r');
  t.equal(f.attempts()[0]?.error, null);
  const [push] = agent.got;
  t.equal(push!.url, '/push');
  t.equal(push!.headers['content-encoding'], 'gzip');
  t.equal(push!.headers['x-svc-log-path'], 'www.example.com/access');
  t.equal(gunzipSync(push!.body).toString(), 'GET /e 503 x\nPOST /f 200 x\n', 'only matching lines, no directive lines');
});

t.test('logagent: a receiver that refuses is a failed attempt, and the lines go with the next', async (t) => {
  let refuse = true;
  const agent = await receiver(t, (_r, res) => { res.statusCode = refuse ? 503 : 200; res.end(); });
  const f = shipFixture(t);
  f.configure({ type: 'logagent', path: 'x', endpoint: { url: agent.url } });
  await f.roll(['one']);
  await f.scheduler.fire('r');
  t.match(f.attempts()[0]?.error, /HTTP 503/);
  refuse = false;
  await f.roll(['two']);
  f.configure({ type: 'logagent', path: 'y', endpoint: { url: agent.url } });
  await f.scheduler.fire('r');
  t.equal(f.attempts().at(-1)?.error, null);
  t.equal(agent.got.at(-1)!.body.toString(), 'one\ntwo\n');
});

t.test('statsd: the real daemon counts the exported lines of each unit', async (t) => {
  const statsd = await startStatsd();
  t.teardown(() => statsd.stop());
  const f = shipFixture(t);
  f.configure({ type: 'statsd', path: '/', endpoint: { port: statsd.port, exports: { enable: true, matchingList: [' 200 '] } } });
  await f.roll(['GET / 200 x', 'GET /a 200 x', 'GET /b 404 x']);
  await f.scheduler.fire('r');
  t.equal(f.attempts()[0]?.error, null);
  await until(() => statsd.counters().get('svc.access.www_example_com.lines') === 2, 'statsd counted the two exported lines', 15_000);
  await f.roll(['GET /c 200 x']);
  await f.scheduler.fire('r');
  await until(() => statsd.counters().get('svc.access.www_example_com.lines') === 3, 'and the next unit', 15_000);
  t.pass('received');
});

t.test('logagent: a unit with no exported line is not pushed, and its files count as shipped', async (t) => {
  const agent = await receiver(t, (_r, res) => res.end());
  const f = shipFixture(t);
  f.configure({ type: 'logagent', path: 'x', endpoint: { url: agent.url, exports: { enable: true, matchingList: ['never'] } } });
  await f.roll(['GET / 200']);
  await f.scheduler.fire('r');
  t.match(f.attempts(), [{ error: null, bytes: 0 }]);
  t.equal(agent.got.length, 0);
  await f.scheduler.fire('r');
  t.equal(f.attempts().length, 1, 'not tried again');
});
