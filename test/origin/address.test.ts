import t from 'tap';
import { parseOriginAddress, originHostHeader } from '../../lib/origin/index.js';

t.test('an IP address without port takes the protocol default port and no path', async (t) => {
  t.same(parseOriginAddress('10.0.0.1', 'http'), { raw: '10.0.0.1', host: '10.0.0.1', port: 80, path: '', isIp: true, explicitPort: false });
  t.equal(parseOriginAddress('10.0.0.1', 'https').port, 443);
});

t.test('a domain with port and path keeps the path without its trailing slash', async (t) => {
  t.same(parseOriginAddress('Origin.Example.com:8080/static/', 'http'),
    { raw: 'Origin.Example.com:8080/static/', host: 'origin.example.com', port: 8080, path: '/static', isIp: false, explicitPort: true });
  t.equal(parseOriginAddress('a.com/', 'http').path, '');
  t.equal(parseOriginAddress('a.com/x/y', 'http').path, '/x/y');
});

t.test('IPv6 addresses are accepted bare or in brackets with a port', async (t) => {
  t.match(parseOriginAddress('::1', 'http'), { host: '::1', port: 80, isIp: true });
  t.match(parseOriginAddress('[::1]:8080/p', 'http'), { host: '::1', port: 8080, path: '/p', isIp: true });
});

t.test('bad addresses are refused with a message naming the address', async (t) => {
  const bad = ['', 'http://a.com', 'a.com:', 'a.com:0', 'a.com:70000', 'a.com:x', 'a b.com', '[::1', '::1:80:x/', 'a..com',
    '-a.com', '300.1.1.1', 'a.com/p?q=1', ':80', 'a.com//x'];
  for (const s of bad) t.throws(() => parseOriginAddress(s, 'http'), { message: /invalid origin address/ }, JSON.stringify(s));
});

t.test('the Host header is the virtual host for an IP and the domain for a domain, with the port only when given', async (t) => {
  t.equal(originHostHeader(parseOriginAddress('10.0.0.1', 'http'), 'www.v.com'), 'www.v.com');
  t.equal(originHostHeader(parseOriginAddress('10.0.0.1:8080', 'http'), 'www.v.com'), 'www.v.com:8080');
  t.equal(originHostHeader(parseOriginAddress('o.com/p', 'http'), 'www.v.com'), 'o.com');
  t.equal(originHostHeader(parseOriginAddress('o.com:81/p', 'http'), 'www.v.com'), 'o.com:81');
});
