// Black-box: testssl.sh (Debian package testssl.sh) against a TLS service port with the default
// https options: it offers TLS 1.3 and 1.2 only, and none of the vulnerabilities testssl.sh checks
// (Heartbleed, CCS, ticketbleed, ROBOT, renegotiation, CRIME, BREACH, POODLE, SWEET32, FREAK,
// DROWN, LOGJAM, BEAST, LUCKY13, RC4 ...) is flagged. Bounded: protocols and vulnerabilities only.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { makeCert, tlsNode } from './helpers.js';

interface Finding { id: string; severity: string; finding: string }

function testssl(args: string[]): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile('testssl', args, { timeout: 170_000, maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
      resolve({ code: err === null ? 0 : typeof err.code === 'number' ? err.code : 1, out: `${stdout}${stderr}` });
    });
  });
}

t.test('testssl.sh finds the configured protocols and no vulnerability on a TLS port', { timeout: 180_000 }, async (t) => {
  const n = await tlsNode(t, [{ name: 'a.test', https: [{ cert: 'a.crt', key: 'a.key' }] }], (dir) => makeCert(dir, 'a', 'a.test'));
  const json = path.join(n.dir, 'testssl.json');
  const r = await testssl(['--quiet', '--color', '0', '--warnings', 'off', '--fast', '--ip', '127.0.0.1', '--protocols', '--vulnerable',
    '--jsonfile', json, `https://a.test:${n.tlsPort}`]);
  t.ok(fs.existsSync(json), `testssl.sh wrote its findings (exit ${r.code}):\n${r.out.slice(-2000)}`);
  const findings = JSON.parse(fs.readFileSync(json, 'utf8')) as Finding[];
  const by = (id: string): string | undefined => findings.find((f) => f.id === id)?.finding;
  t.match(by('TLS1_3'), /^offered/, 'TLS 1.3 offered');
  t.match(by('TLS1_2'), /^offered/, 'TLS 1.2 offered');
  for (const id of ['SSLv2', 'SSLv3', 'TLS1', 'TLS1_1']) t.match(by(id), /^not offered/, `${id} not offered`);
  const flagged = findings.filter((f) => ['LOW', 'MEDIUM', 'HIGH', 'CRITICAL'].includes(f.severity));
  t.strictSame(flagged.map((f) => `${f.id} ${f.severity}: ${f.finding}`), [], 'no vulnerability flagged');
  const vulnerabilities = findings.filter((f) => ['heartbleed', 'CCS', 'ticketbleed', 'ROBOT', 'secure_renego', 'secure_client_renego', 'CRIME_TLS',
    'POODLE_SSL', 'SWEET32', 'FREAK', 'DROWN', 'LOGJAM', 'BEAST', 'LUCKY13', 'RC4'].includes(f.id));
  t.ok(vulnerabilities.length >= 10, `the vulnerability checks ran: ${vulnerabilities.map((f) => `${f.id}=${f.severity}`).join(' ')}`);
});
