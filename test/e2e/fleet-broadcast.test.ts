// Black-box: discovery by broadcast between two real nodes. Broadcast does not cross 127.x
// addresses, so each node runs in its own network namespace, joined by a veth pair
// (10.213.0.1/24 and 10.213.0.2/24), with `members: null`: each hears the other's advertisement
// sent to 10.213.0.255. Needs root (ip netns); skipped, and said so, where it cannot be set up.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { baseSetting, projectRoot, writeSetting } from '../helpers/server.js';
import { pollUntil } from '../helpers/wait.js';

const tag = `fa${process.pid % 100000}`;
const ns = [`${tag}a`, `${tag}b`];
const ip = (...args: string[]): void => { execFileSync('ip', args, { stdio: 'ignore' }); };

function setUp(): string | undefined {
  try {
    for (const n of ns) ip('netns', 'add', n);
    ip('link', 'add', `${tag}0`, 'type', 'veth', 'peer', 'name', `${tag}1`);
    ns.forEach((n, i) => {
      ip('link', 'set', `${tag}${i}`, 'netns', n);
      ip('-n', n, 'addr', 'add', `10.213.0.${i + 1}/24`, 'broadcast', '10.213.0.255', 'dev', `${tag}${i}`);
      ip('-n', n, 'link', 'set', `${tag}${i}`, 'up');
      ip('-n', n, 'link', 'set', 'lo', 'up');
    });
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}

function tearDown(): void {
  for (const n of ns) { try { ip('netns', 'del', n); } catch { /* not made */ } }
}

const failed = setUp();
t.teardown(tearDown);
if (failed !== undefined) {
  t.plan(0, `network namespaces cannot be set up here (needs root and iproute2): ${failed.split('\n')[0]}`);
} else {
  const nodes: Array<{ proc: ChildProcess; dir: string; out: string[] }> = [];
  t.teardown(async () => {
    await Promise.all(nodes.map((n) => new Promise<void>((r) => {
      if (n.proc.exitCode !== null) { r(); return; }
      n.proc.once('exit', () => r());
      n.proc.kill('SIGTERM');
    })));
  });
  // Each namespace has its own ports: the same numbers serve in both.
  const setting = baseSetting([{ name: 'a.com', listen: '127.0.0.1:18080', origin: { address: ['127.0.0.1:9'] } }], 18100, {
    extra: { env: { log: { meta: { dir: 'svclog' } }, management: { cluster: { discover: { enable: true, secret: 'fleet-secret', period: 1, members: null } } } } },
  }, 18200);
  for (const n of ns) {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'svc-test-'));
    const settingPath = await writeSetting(dir, setting);
    const proc = spawn('ip', ['netns', 'exec', n, process.execPath, path.join(projectRoot, 'dist/bin/svc.js'), 'start', '--setting', settingPath], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
    const out: string[] = [];
    proc.stdout!.on('data', (c: Buffer) => out.push(c.toString()));
    proc.stderr!.on('data', (c: Buffer) => out.push(c.toString()));
    nodes.push({ proc, dir, out });
  }
  const infoLog = (i: number): Promise<string> => fs.readFile(path.join(nodes[i]!.dir, 'svclog', 'info.log'), 'utf8').catch(() => '');

  t.test('with members null each node hears the other by broadcast', async (t) => {
    for (const [i, other] of [[0, '10.213.0.2'], [1, '10.213.0.1']] as const) {
      const log = await pollUntil(() => infoLog(i), (l) => l.includes('discovery: node heard') && l.includes(other), { timeoutMs: 40_000, intervalMs: 200 });
      t.match(log, new RegExp(`discovery: node heard.*${other.replace(/\./g, '\\.')}`), `node ${i + 1} heard ${other}`);
      t.match(log, /discovery started.*"mode":"broadcast"/);
    }
    await pollUntil(async () => nodes[0]!.out.join(''), (o) => o.includes('"msg":"started"'), { timeoutMs: 40_000, intervalMs: 100 });
    const listed = execFileSync('ip', ['netns', 'exec', ns[0]!, 'curl', '-sS', '--noproxy', '*', 'http://127.0.0.1:18200/get/discover']).toString();
    t.match(JSON.parse(listed), { result: [{ address: '10.213.0.2', advertisement: { signature: /^[0-9a-f]{64}$/ } }] }, '/get/discover lists the node heard by broadcast');
  });
}
