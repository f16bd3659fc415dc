import t from 'tap';
import { OriginSet, type DnsRecord } from '../../lib/origin/index.js';
import type { Resolution } from '../../lib/origin/dns.js';
import { startOrigin, until } from './fixtures/origins.js';

t.test('a domain that does not resolve gives ORIGIN_DNS (502, Non-Existent-Domain) and a failed dns record', async (t) => {
  const dns: DnsRecord[] = [];
  const s = new OriginSet({ vhost: 'v.com', protocol: 'http', address: ['no-such-origin.invalid:8080'], address2: [], onDns: (r) => dns.push(r) });
  t.teardown(() => s.close());
  const err = await s.request({ method: 'GET', url: '/', headers: {} }).catch((e: unknown) => e);
  t.match(err, { code: 'ORIGIN_DNS', status: 502, sockError: 'Non-Existent-Domain' });
  t.match(dns, [{ domain: 'no-such-origin.invalid', success: false, ips: [] }]);
  t.same(s.status().Address, [{ 'no-such-origin.invalid:8080': 'Inactive' }]);
  t.equal(s.allExcluded(), true);
});

t.test('a domain address falls over to address2 when it does not resolve', async (t) => {
  const good = await startOrigin();
  t.teardown(() => good.stop());
  const s = new OriginSet({ vhost: 'v.com', protocol: 'http', address: ['no-such-origin.invalid'], address2: [`127.0.0.1:${good.port}`] });
  t.teardown(() => s.close());
  const r = await s.request({ method: 'GET', url: '/x', headers: {} });
  await r.body.resume();
  t.equal(r.statusCode, 200);
  t.equal(r.secondary, true);
});

t.test('when the TTL expires the domain is resolved again in the background while the old IP serves', async (t) => {
  const a = await startOrigin();
  let b: Awaited<ReturnType<typeof startOrigin>>;
  try {
    b = await startOrigin(undefined, a.port, '127.0.0.2');
  } catch {
    await a.stop();
    t.pass('127.0.0.2 is not usable here: nothing to check');
    return;
  }
  t.teardown(async () => { await a.stop(); await b.stop(); });

  // The first answer lives 50 ms (the resolver is ours, so its TTL is too): the test waits for
  // the re-resolution it causes, not for a real TTL to run out.
  const answers: Resolution[] = [
    { ips: ['127.0.0.1'], ttl: 0.05, via: 'dns' },
    { ips: ['127.0.0.2'], ttl: 60, via: 'dns' },
  ];
  let calls = 0;
  let release: () => void = () => undefined;
  const gate = new Promise<void>((r) => { release = r; });
  const { OriginSet: MockedSet } = await t.mockImport<typeof import('../../lib/origin/origin-set.js')>(
    '../../lib/origin/origin-set.js', {
      '../../lib/origin/dns.js': {
        resolveDomain: async (): Promise<Resolution> => {
          const n = calls++;
          if (n > 0) await gate; // the second resolution is slow
          return answers[Math.min(n, 1)]!;
        },
      },
    });
  const s = new MockedSet({ vhost: 'v.com', protocol: 'http', address: [`origin.test:${a.port}`], address2: [] });
  t.teardown(() => s.close());

  const first = await s.request({ method: 'GET', url: '/1', headers: {} });
  await first.body.resume();
  t.equal(first.ip, '127.0.0.1');
  t.ok(await until(() => calls === 2), 'resolution started at TTL expiry');
  const during = await s.request({ method: 'GET', url: '/2', headers: {} });
  await during.body.resume();
  t.equal(during.ip, '127.0.0.1', 'the old IP serves while the new answer is pending');
  release();
  t.ok(await until(() => s.status().ActiveIP.some((e) => e['127.0.0.2'] !== undefined)), 'the new answer is taken');
  const after = await s.request({ method: 'GET', url: '/3', headers: {} });
  await after.body.resume();
  t.equal(after.ip, '127.0.0.2');
  t.equal(b.seen[0]!.host, `origin.test:${a.port}`);
  t.same(s.status().ActiveIP.map((e) => Object.keys(e)[0]), ['127.0.0.2']);
});
