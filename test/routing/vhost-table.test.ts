import t from 'tap';
import { VhostTable, type RoutableHost } from '../../lib/routing/vhost-table.js';

const host = (name: string, aliases: string[] = [], port = 80, enable = true): RoutableHost =>
  ({ name, aliases, enable, listen: { host: null, port } });

t.test('a host is found by its name and by each alias, case-insensitively', async (t) => {
  const table = new VhostTable([host('a.com', ['www.a.com']), host('b.com')]);
  t.equal(table.route('a.com', 80)?.name, 'a.com');
  t.equal(table.route('www.a.com', 80)?.name, 'a.com');
  t.equal(table.route('b.com', 80)?.name, 'b.com');
  t.equal(table.route('c.com', 80), undefined);
});

t.test('the longest wildcard alias wins over a shorter one', async (t) => {
  const table = new VhostTable([host('wide', ['*.example.com']), host('narrow', ['*.img.example.com'])]);
  t.equal(table.route('x.img.example.com', 80)?.name, 'narrow');
  t.equal(table.route('x.example.com', 80)?.name, 'wide');
  t.equal(table.route('example.com', 80), undefined, 'a wildcard needs a label before the suffix');
});

t.test('an exact name beats a wildcard that also matches', async (t) => {
  const table = new VhostTable([host('wild', ['*.a.com']), host('exact', ['img.a.com'])]);
  t.equal(table.route('img.a.com', 80)?.name, 'exact');
});

t.test('a host answers only on the port it listens on, and on the internal port', async (t) => {
  const table = new VhostTable([host('a.com', [], 8080), host('b.com', [], 8081)]);
  t.equal(table.route('a.com', 8080)?.name, 'a.com');
  t.equal(table.route('a.com', 8081), undefined);
  t.equal(table.route('a.com', undefined)?.name, 'a.com');
});

t.test('a disabled host is taken out', async (t) => {
  const table = new VhostTable([host('a.com', [], 80, false)]);
  t.equal(table.route('a.com', 80), undefined);
});

t.test('defaultHosting serves unmatched names when it names a host, otherwise nothing matches', async (t) => {
  t.equal(new VhostTable([host('a.com')], 'a.com').route('zzz', 80)?.name, 'a.com');
  t.equal(new VhostTable([host('a.com')], 'missing.com').route('zzz', 80), undefined);
  t.equal(new VhostTable([host('a.com', [], 81)], 'a.com').route('zzz', 80), undefined, 'not on a port the default host does not listen on');
});

t.test('hosts sharing a port open one socket; a host with listen off opens none', async (t) => {
  const off: RoutableHost = { name: 'off.com', aliases: [], enable: true, listen: null };
  const table = new VhostTable([host('a.com', [], 80), host('b.com', [], 80), off, { ...host('c.com'), listen: { host: '127.0.0.1', port: 81 } }]);
  t.same(table.listens().sort((a, b) => a.port - b.port), [{ host: null, port: 80 }, { host: '127.0.0.1', port: 81 }]);
});

t.test('hosts bound to one address answer only connections to that address; a specific address wins over *', async (t) => {
  const at = (name: string, ip: string | null, port: number): RoutableHost => ({ name, aliases: [], enable: true, listen: { host: ip, port } });
  const table = new VhostTable([at('a.com', '127.0.0.2', 80), at('b.com', '127.0.0.3', 80), at('any.com', null, 80), at('shared.com', null, 80), at('shared-b.com', '127.0.0.3', 80)]);
  t.equal(table.route('a.com', 80, '127.0.0.2')?.name, 'a.com');
  t.equal(table.route('a.com', 80, '127.0.0.3'), undefined, 'a.com is not on 127.0.0.3');
  t.equal(table.route('b.com', 80, '::ffff:127.0.0.3')?.name, 'b.com', 'an IPv4-mapped local address is the IPv4 one');
  t.equal(table.route('any.com', 80, '127.0.0.9')?.name, 'any.com', '* matches any address');
  t.equal(table.route('a.com', 80, '127.0.0.9'), undefined);
  const both = new VhostTable([{ name: 'wild', aliases: ['x.com'], enable: true, listen: { host: null, port: 80 } }, { name: 'bound', aliases: ['x.com'], enable: true, listen: { host: '127.0.0.2', port: 80 } }]);
  t.equal(both.route('x.com', 80, '127.0.0.2')?.name, 'bound', 'the host bound to the address wins over the * host');
  t.equal(both.route('x.com', 80, '127.0.0.5')?.name, 'wild');
});

t.test('the default host stands in only on the address it listens on', async (t) => {
  const table = new VhostTable([{ name: 'd.com', aliases: [], enable: true, listen: { host: '127.0.0.2', port: 80 } }], 'd.com');
  t.equal(table.route('zzz', 80, '127.0.0.2')?.name, 'd.com');
  t.equal(table.route('zzz', 80, '127.0.0.3'), undefined);
  t.equal(table.route('zzz', undefined)?.name, 'd.com', 'the internal port reaches it');
});
