import t from 'tap';
import { parseTarget, hostWithoutPort } from '../../lib/pipeline/parts/target.js';

t.test('origin-form takes the host from the Host header without its port', async (t) => {
  t.same(parseTarget('/a?b=1', 'Example.COM:8080'), { host: 'example.com', url: '/a?b=1' });
});

t.test('absolute-form takes the host from the target, not from the Host header', async (t) => {
  t.same(parseTarget('http://a.com:81/x?y', 'b.com'), { host: 'a.com', url: '/x?y' });
  t.same(parseTarget('http://a.com', 'b.com'), { host: 'a.com', url: '/' });
  t.same(parseTarget('http://a.com?q=1', undefined), { host: 'a.com', url: '/?q=1' });
});

t.test('asterisk-form is kept for OPTIONS *', async (t) => {
  t.same(parseTarget('*', 'a.com'), { host: 'a.com', url: '*' });
});

t.test('other targets and schemes are refused', async (t) => {
  t.equal(parseTarget('a.com:443', 'a.com'), 'bad-target');
  t.equal(parseTarget('ftp://a.com/x', 'a.com'), 'bad-target');
  t.equal(parseTarget('http:///x', 'a.com'), 'bad-target');
  t.equal(parseTarget('http://user@a.com/p', undefined), 'bad-target', 'userinfo (RFC 9110 4.2.4)');
  t.equal(parseTarget('http://user:pw@a.com', 'a.com'), 'bad-target');
});

t.test('IPv6 literals keep their brackets', async (t) => {
  t.equal(hostWithoutPort('[::1]:8080'), '[::1]');
});
