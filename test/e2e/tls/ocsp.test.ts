// Black-box: OCSP stapling. A test CA signs certificates that name an OCSP responder on
// loopback (`openssl ocsp`, a real responder over the CA's index); the worker fetches the
// response and `openssl s_client -status` gets it stapled. A host with ocspStapling false
// staples nothing.
import { spawn } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { freePort } from '../../helpers/ports.js';
import { pollUntil, waitFor } from '../../helpers/wait.js';
import { curl, run, tlsNode } from './helpers.js';

const ossl = async (args: string[]): Promise<void> => {
  const r = await run('openssl', args);
  if (r.code !== 0) throw new Error(`openssl ${args.join(' ')}: ${r.stderr}`);
};

/** A CA in `dir` and, signed by it, certificates for `names` naming the responder at `ocspUrl`. */
async function makeCa(dir: string, names: string[], ocspUrl: string): Promise<void> {
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  await ossl(['req', '-x509', ...ec, '-subj', '/CN=Test OCSP CA', '-days', '30', '-keyout', path.join(dir, 'ca.key'), '-out', path.join(dir, 'ca.crt'),
    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign,digitalSignature']);
  const index: string[] = [];
  for (const [i, name] of names.entries()) {
    const f = (ext: string): string => path.join(dir, `${name}.${ext}`);
    await ossl(['req', ...ec, '-subj', `/CN=${name}`, '-keyout', f('key'), '-out', f('csr')]);
    fs.writeFileSync(f('ext'), `subjectAltName=DNS:${name}\nauthorityInfoAccess=OCSP;URI:${ocspUrl}\n`);
    await ossl(['x509', '-req', '-in', f('csr'), '-CA', path.join(dir, 'ca.crt'), '-CAkey', path.join(dir, 'ca.key'), '-set_serial', String(1000 + i),
      '-days', '10', '-extfile', f('ext'), '-out', f('crt')]);
    const c = new X509Certificate(fs.readFileSync(f('crt')));
    const end = new Date(c.validTo).toISOString().replace(/[-:T]/g, '').slice(2, 14);
    index.push(`V\t${end}Z\t\t${c.serialNumber}\tunknown\t/CN=${name}`);
  }
  fs.writeFileSync(path.join(dir, 'index.txt'), `${index.join('\n')}\n`);
}

t.test('a certificate naming an OCSP responder gets its response stapled; ocspStapling false staples nothing', async (t) => {
  const ocspPort = await freePort();
  const n = await tlsNode(t, [
    { name: 'a.test', https: [{ cert: 'a.test.crt', key: 'a.test.key', ca: 'ca.crt' }] },
    { name: 'b.test', https: [{ cert: 'b.test.crt', key: 'b.test.key', ca: 'ca.crt' }], httpsOptions: { ocspStapling: false } },
  ], async (dir) => {
    await makeCa(dir, ['a.test', 'b.test'], `http://127.0.0.1:${ocspPort}`);
    const responder = spawn('openssl', ['ocsp', '-index', path.join(dir, 'index.txt'), '-port', String(ocspPort), '-rsigner', path.join(dir, 'ca.crt'),
      '-rkey', path.join(dir, 'ca.key'), '-CA', path.join(dir, 'ca.crt'), '-nmin', '10', '-ignore_err'], { stdio: 'ignore' });
    t.teardown(() => { responder.kill(); });
    const up = await waitFor(async () => (await run('curl', ['-s', '-o', '/dev/null', `http://127.0.0.1:${ocspPort}/`])).code === 0);
    if (!up) throw new Error('openssl ocsp did not start');
  });

  const status = (name: string) => run('openssl', ['s_client', '-connect', `127.0.0.1:${n.tlsPort}`, '-servername', name, '-status',
    '-CAfile', path.join(n.dir, 'ca.crt')]);
  const a = await pollUntil(() => status('a.test'), (r) => r.stdout.includes('OCSP Response Status: successful'), { timeoutMs: 30_000 });
  t.match(a.stdout, /OCSP Response Status: successful/, 'the response is stapled');
  t.match(a.stdout, /Cert Status: good/);
  t.match(a.stdout, /Next Update: /, 'with the responder\'s next update');
  t.match(a.stdout, /Verify return code: 0 \(ok\)/, 'the chain verifies against the test CA');
  for (const v of ['--http2', '--http1.1']) {
    const r = await curl(n.tlsPort, 'a.test', '/stapled', path.join(n.dir, 'ca.crt'), [v, '--cert-status']);
    t.equal(r.code, 0, r.stderr);
    t.match(r.stdout, /^HTTP\/(2|1\.1) 200/, `a stapled connection serves ${v} (curl --cert-status verified the staple)`);
  }
  const b = await status('b.test');
  t.match(b.stdout, /OCSP response: no response sent/, 'ocspStapling false: no staple');
});
