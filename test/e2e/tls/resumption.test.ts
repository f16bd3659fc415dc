// Black-box: TLS session resumption across workers. The primary's ticket keys reach every
// worker, so a ticket issued by one worker resumes on the other: a client keeps resuming its
// first session until each of two workers (told apart by the debug header x-svc-worker) answered
// a resumed connection.
import tls from 'node:tls';
import t from 'tap';
import { makeCert, tlsNode } from './helpers.js';

const HOST = 'a.test';

interface Visit { reused: boolean; worker: string; session: Buffer | undefined; protocol: string | null }

/** One connection: a GET with Connection: close; the session ticket the server sent, if any. */
function visit(port: number, version: tls.SecureVersion, session?: Buffer): Promise<Visit> {
  return new Promise((resolve, reject) => {
    let ticket: Buffer | undefined;
    const s = tls.connect({ host: '127.0.0.1', port, servername: HOST, rejectUnauthorized: false, session, minVersion: version, maxVersion: version, ALPNProtocols: ['http/1.1'] }, () => {
      s.write(`GET /r HTTP/1.1\r\nHost: ${HOST}\r\nConnection: close\r\n\r\n`);
    });
    s.on('session', (b: Buffer) => { ticket ??= b; });
    const chunks: Buffer[] = [];
    s.on('data', (c: Buffer) => chunks.push(c));
    s.on('error', reject);
    s.on('end', () => {
      const head = Buffer.concat(chunks).toString('latin1');
      const worker = /^x-svc-worker: *(\S+)/im.exec(head)?.[1] ?? '?';
      resolve({ reused: s.isSessionReused(), worker, session: ticket ?? s.getSession(), protocol: s.getProtocol() });
    });
  });
}

for (const version of ['TLSv1.3', 'TLSv1.2'] as const) {
  t.test(`a ${version} session issued by one worker resumes on the other`, async (t) => {
    const n = await tlsNode(t, [{ name: HOST, https: [{ cert: 'a.crt', key: 'a.key' }] }], (dir) => makeCert(dir, 'a', HOST), {},
      { SVC_DEBUG_HEADERS: '1' }, 2);
    const first = await visit(n.tlsPort, version);
    t.equal(first.protocol, version);
    t.equal(first.reused, false, 'the first connection is a full handshake');
    t.ok(first.session !== undefined, 'the server issued a session ticket');
    const resumedOn = new Set<string>();
    const failures: string[] = [];
    // Bounded: the kernel spreads connections over the two workers; 40 tries miss one only by a fault.
    for (let i = 0; i < 40 && resumedOn.size < 2; i++) {
      const v = await visit(n.tlsPort, version, first.session);
      if (v.reused) resumedOn.add(v.worker); else failures.push(v.worker);
    }
    t.strictSame([...resumedOn].sort(), ['0', '1'], 'both workers resumed the session of the first connection');
    t.strictSame(failures, [], 'no connection fell back to a full handshake');
  });
}
