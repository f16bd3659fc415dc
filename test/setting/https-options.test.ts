// What of hosting[].https and its options this build cannot honour is refused at the JSON path:
// SSL 3.0, a gap in the TLS versions, a cipher expression OpenSSL refuses, URL sources, hosts on
// one TLS port disagreeing, a TLS port that is also a plain one, and certificates that cannot serve.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { parseSetting } from '../../lib/setting-check/load.js';
import { SettingError } from '../../lib/setting/issues.js';
import { certIssues, homeFiles } from '../../lib/tls/certificates.js';

const home = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-https-opt-'));
t.teardown(() => fs.rmSync(home, { recursive: true, force: true }));
const cert = (name: string, days = 30): void => {
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-subj', `/CN=${name}`, '-days', String(days),
    '-keyout', path.join(home, `${name}.key`), '-out', path.join(home, `${name}.crt`)], { stdio: 'ignore' });
};
cert('a');
cert('b');

function issues(hosting: unknown[]): string[] {
  try {
    parseSetting({ env: { home }, hosting });
    return [];
  } catch (err) {
    if (!(err instanceof SettingError)) throw err;
    return err.issues.map((i) => `${i.path}: ${i.message}`);
  }
}
const host = (name: string, httpsOptions: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) => ({
  name, listen: '127.0.0.1:8080', https: [{ cert: 'a.crt', key: 'a.key' }], httpsOptions: { listen: '127.0.0.1:8443', ...httpsOptions }, ...extra,
});

t.test('the default options are accepted', async (t) => {
  t.strictSame(issues([host('a.test')]), []);
});

t.test('enableSsl30 is refused: OpenSSL 3 has no SSL 3.0', async (t) => {
  t.match(issues([host('a.test', { enableSsl30: true })]), [/^hosting\[0\]\.httpsOptions\.enableSsl30: SSL 3\.0 is not available/]);
});

t.test('a gap between enabled TLS versions is refused at the missing one', async (t) => {
  t.match(issues([host('a.test', { enableTls12: false, enableTls11: true })]), [/^hosting\[0\]\.httpsOptions\.enableTls12: /]);
  t.match(issues([host('a.test', { enableTls12: false, enableTls13: false })]), [/^hosting\[0\]\.httpsOptions\.enableTls13: no TLS version/]);
});

t.test('a cipher expression OpenSSL matches nothing with is refused', async (t) => {
  t.match(issues([host('a.test', { ciphersuite: 'NOTHING-LIKE-THIS' })]), [/^hosting\[0\]\.httpsOptions\.ciphersuite: OpenSSL refuses/]);
});

t.test('a certificate URL is accepted over http and https, refused with another scheme', async (t) => {
  t.strictSame(issues([host('a.test', {}, { https: [{ cert: 'https://example.com/a.crt', key: 'http://example.com/a.key' }] })]), []);
  t.match(issues([host('a.test', {}, { https: [{ cert: 'ftp://example.com/a.crt', key: 'a.key' }] })]), [/^hosting\[0\]\.https\[0\]\.cert: only http:\/\/ and https:\/\/ URLs can be fetched/]);
});

t.test('hosts sharing a TLS port must agree on its options', async (t) => {
  t.match(issues([host('a.test'), host('b.test', { enableTls11: true })]), [/^hosting\[1\]\.httpsOptions: hosts sharing TLS port 8443/]);
});

t.test('a port cannot be plain for one host and TLS for another', async (t) => {
  t.match(issues([host('a.test', { listen: '127.0.0.1:8080' })]), [/^hosting\[0\]\.httpsOptions\.listen: port 8080 is the plain listen/]);
});

t.test('a key of another certificate, an expired certificate and a missing file are refused at their path', async (t) => {
  cert('old', 1);
  const s = parseSetting({
    env: { home },
    hosting: [
      host('a.test', {}, { https: [{ cert: 'a.crt', key: 'b.key' }] }),
      host('b.test', {}, { https: [{ cert: 'b.crt', key: 'b.key' }] }),
      host('c.test', {}, { https: [{ cert: 'nope.crt', key: 'b.key' }] }),
    ],
  });
  const found = certIssues(s, () => homeFiles(s)).map((i) => `${i.path}: ${i.message}`);
  t.match(found, [/^hosting\[0\]\.https\[0\]\.key: does not match the certificate/, /^hosting\[2\]\.https\[0\]\.cert: .*nope\.crt cannot be read: ENOENT/]);
  const later = certIssues(s, () => homeFiles(s), Date.now() + 40 * 86_400_000).map((i) => i.path);
  t.ok(later.includes('hosting[1].https[0].cert'), 'a certificate past its end is refused');
});
