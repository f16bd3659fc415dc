// The test helpers' free ports (test/helpers/ports.ts): two test files run side by side, each
// picking ports for servers that bind them later, must never be handed the same port (a worker's
// internal port was once found taken by another test's server: EADDRINUSE).
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import t from 'tap';

const PICKS = 400;
const helper = new URL('../helpers/ports.ts', import.meta.url).href;
// Picks PICKS ports (one run of three among them), prints them, and keeps them until told to go.
const child = `
const { freePort, consecutiveFreePorts } = await import(${JSON.stringify(helper)});
const got = [];
const run = await consecutiveFreePorts(3);
got.push(run, run + 1, run + 2);
while (got.length < ${PICKS}) got.push(await freePort());
console.log(JSON.stringify(got));
process.stdin.resume();
process.stdin.once('end', () => process.exit(0));
`;

function picker(): { ports: Promise<number[]>; done: () => Promise<unknown> } {
  const p = spawn(process.execPath, [...process.execArgv, '--input-type=module', '-e', child], { stdio: ['pipe', 'pipe', 'inherit'] });
  let out = '';
  p.stdout.on('data', (c: Buffer) => { out += c.toString(); });
  const ports = new Promise<number[]>((resolve, reject) => {
    p.stdout.on('data', () => { if (out.includes('\n')) resolve(JSON.parse(out) as number[]); });
    p.once('exit', (code) => reject(new Error(`picker exited (${code}) before printing its ports`)));
  });
  return { ports, done: () => { p.stdin.end(); return once(p, 'exit'); } };
}

t.test('two processes picking ports at the same time are never given the same port', async (t) => {
  const a = picker();
  const b = picker();
  const [pa, pb] = await Promise.all([a.ports, b.ports]);
  await Promise.all([a.done(), b.done()]);
  t.equal(new Set(pa).size, PICKS, 'no port twice within one process');
  const shared = pa.filter((p) => pb.includes(p));
  t.same(shared, [], 'none shared between the two');
});
