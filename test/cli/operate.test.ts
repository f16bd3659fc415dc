// Operating a node the way an operator does, black-box with the real `svc` command line, curl and
// a stand-in for systemd's notify socket: readiness (Type=notify), `svc status`, `svc reload`
// (applied, refused with JSON paths, env changes said to wait for a restart), granting restart
// by a reload, the request id and node name on answers, a HEAD miss's x-cache, the management
// port found from the setting file, and a busy port named with the setting file and errno.
// One node serves the whole file (issue 29).
import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';
import { TestOrigin } from '../helpers/origin.js';
import { freePort } from '../helpers/ports.js';
import { baseSetting, projectRoot, startWithSetting, writeSetting } from '../helpers/server.js';
import { call, infoLog, LOCAL_LOGS, until } from '../lifecycle/fixtures/node.js';

const run = promisify(execFile);
const svcJs = path.join(projectRoot, 'dist/bin/svc.js');

/** `svc ARGS` as an operator runs it, with extra environment variables. */
async function svc(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const r = await run(process.execPath, [svcJs, ...args], { env: { ...process.env, SVC_SETTING: '', ...env }, timeout: 60_000 });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

async function curl(args: string[]): Promise<string> {
  return (await run('curl', ['-sS', '-D', '-', '-o', '/dev/null', ...args])).stdout;
}

const header = (head: string, name: string): string | undefined =>
  new RegExp(`^${name}: *(.*?)\\r?$`, 'im').exec(head)?.[1];

/**
 * systemd's side of sd_notify: a datagram socket (python3; node has none) that prints each
 * message on a line and closes the descriptors systemd-notify's barrier sends.
 */
const RECEIVER = `
import socket, sys, os, array
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
print("bound", flush=True)
while True:
    msg, anc, _f, _a = s.recvmsg(4096, socket.CMSG_SPACE(64))
    for level, typ, data in anc:
        if level == socket.SOL_SOCKET and typ == socket.SCM_RIGHTS:
            fds = array.array('i'); fds.frombytes(data[:len(data) - len(data) % 4])
            for fd in fds: os.close(fd)
    print(msg.decode().replace("\\n", " "), flush=True)
`;

async function notifyReceiver(dir: string): Promise<{ socket: string; lines: string[]; stop(): void }> {
  const socket = path.join(dir, 'notify.sock');
  const proc = spawn('python3', ['-c', RECEIVER, socket], { stdio: ['ignore', 'pipe', 'inherit'] });
  const lines: string[] = [];
  proc.stdout.on('data', (b: Buffer) => lines.push(...b.toString().split('\n').filter(Boolean)));
  await until(async () => (lines.includes('bound') ? true : undefined), 'the notify socket is bound');
  return { socket, lines, stop: () => proc.kill() };
}

t.test('a node as an operator runs it: ready, status, reload, restart granted by a reload, answer fields', async (t) => {
  const origin = await new TestOrigin().on('/head-miss', (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '2', 'cache-control': 'max-age=60' });
    res.end('ok');
  }).start();
  t.teardown(() => origin.stop());
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'svc-operate-'));
  t.teardown(() => fs.rm(dir, { recursive: true, force: true }));
  const notify = await notifyReceiver(dir);
  t.teardown(() => notify.stop());
  const port = await freePort();
  const hosts = [
    {
      name: 'a.com', listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}`] },
      functions: {
        network: { http: { frontEnd: { answerFields: { requestId: { enable: true, name: 'x-request-id' }, nodeName: { enable: true, value: 'edge-test-7' } } } } },
        // The test's curl is on loopback, which access logs leave out by default.
        operations: { log: { meta: { dir: 'svclog' }, access: { loopback: true } } },
      },
    },
    { name: 'b.com', listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}`] } },
  ];
  const apiPort = await freePort();
  let apiAtReady: number | undefined;
  void until(async () => (notify.lines.some((l) => l.includes('READY=1')) ? true : undefined), 'READY=1', 60_000)
    .then(async () => { apiAtReady = (await call(apiPort, '/get/setting/running.meta')).status; }, () => undefined);
  const basePort = await freePort();
  const settingPath = await writeSetting(dir, baseSetting(hosts, basePort, { extra: LOCAL_LOGS }, apiPort));
  const server = await startWithSetting(dir, settingPath, basePort, { NOTIFY_SOCKET: notify.socket }, apiPort);
  t.teardown(() => server.stop());
  const at = ['--setting', server.settingPath];

  await t.test('systemd is told READY=1 once the management API answers', async (t) => {
    await until(async () => apiAtReady, 'the API call made when READY=1 came');
    t.equal(apiAtReady, 200, 'the API answered when systemd was told the node is ready');
    t.match(notify.lines.find((l) => l.includes('READY=1')), /STATUS=serving; primary \d+/);
  });

  await t.test('svc --version prints the version of package.json', async (t) => {
    const pkg = JSON.parse(await fs.readFile(path.join(projectRoot, 'package.json'), 'utf8')) as { version: string };
    const r = await svc(['--version']);
    t.equal(r.code, 0);
    t.match(r.stdout, new RegExp(`^svc ${pkg.version.replaceAll('.', '\\.')} \\(node v24\\.`));
  });

  await t.test('svc status shows processes, workers, uptime, setting generation, license and ports', async (t) => {
    const r = await svc(['status', ...at]);
    t.equal(r.code, 0, r.stderr);
    t.match(r.stdout, `running at http://127.0.0.1:${server.apiPort}: version `);
    t.match(r.stdout, new RegExp(`setting: +${server.settingPath.replaceAll('.', '\\.')} \\(generation \\d+\\)`));
    t.match(r.stdout, /uptime: +\d+m \d+s since \d{4}-/);
    t.match(r.stdout, new RegExp(`processes: +supervisor ${server.proc.pid}, primary \\d+`));
    t.match(r.stdout, /workers: +1\/1 serving: #0 \d+ serving/);
    t.match(r.stdout, /license: +None/, 'no license file: said, not hidden');
    t.match(r.stdout, new RegExp(`ports: +service 127\\.0\\.0\\.1:${port}; api ${server.apiPort}, log listener ${server.apiPort}/udp`));
  });

  await t.test('the management port is found from the setting file, SVC_SETTING, or the port a refused file names', async (t) => {
    const byEnv = await svc(['status'], { SVC_SETTING: server.settingPath });
    t.equal(byEnv.code, 0, byEnv.stderr);
    const broken = path.join(dir, 'broken.json');
    await fs.writeFile(broken, JSON.stringify({ env: { management: { api: { port: server.apiPort } } }, hosting: 7 }));
    const r = await svc(['status', '--setting', broken]);
    t.equal(r.code, 0, 'the node is found through the port the file names');
    t.match(r.stderr, `note: ${broken} does not load`);
    t.match(r.stderr, `its env.management.api.port ${server.apiPort} is used`);
  });

  await t.test('an installed release finds the node through <home>/setting.json, else tries 10040, saying so', async (t) => {
    // The deploy layout (README, Deploying): <home>/app/<version>/ beside <home>/setting.json.
    const home = path.join(dir, 'installed');
    const app = path.join(home, 'app', '9.9.9');
    await fs.mkdir(app, { recursive: true });
    await fs.cp(path.join(projectRoot, 'dist'), path.join(app, 'dist'), { recursive: true });
    await fs.copyFile(path.join(projectRoot, 'package.json'), path.join(app, 'package.json'));
    await fs.symlink(path.join(projectRoot, 'node_modules'), path.join(app, 'node_modules'));
    const installed = (args: string[]): Promise<{ code: number; stdout: string; stderr: string }> =>
      run(process.execPath, [path.join(app, 'dist/bin/svc.js'), ...args], { env: { ...process.env, SVC_SETTING: '' } })
        .then((r) => ({ code: 0, ...r }), (e: { code: number; stdout: string; stderr: string }) => e);
    const none = await installed(['status']);
    t.match(none.stderr, 'trying the default management port 10040', 'no setting file: the default port, said');
    await fs.copyFile(server.settingPath, path.join(home, 'setting.json'));
    const found = await installed(['status']);
    t.equal(found.code, 0, found.stderr);
    t.match(found.stdout, `running at http://127.0.0.1:${server.apiPort}:`);
  });

  await t.test('every answer of a host can carry the request id and the node name; a HEAD miss says x-cache', async (t) => {
    const head = await curl(['-I', '-H', 'Host: a.com', `http://127.0.0.1:${port}/head-miss`]);
    t.match(head, /^HTTP\/1\.1 200/);
    t.equal(header(head, 'x-cache'), 'TCP_MISS', 'a HEAD that misses says so, as a GET does');
    t.equal(header(head, 'x-svc-node'), 'edge-test-7');
    const id = header(head, 'x-request-id');
    t.match(id, /^[0-9a-f-]{36}$/, 'the request id under the configured name');
    const get = await curl(['-H', 'Host: a.com', `http://127.0.0.1:${port}/head-miss`]);
    t.not(header(get, 'x-request-id'), id, 'each request its own id');
    const hit = await curl(['-H', 'Host: a.com', `http://127.0.0.1:${port}/head-miss`]);
    t.equal(header(hit, 'x-cache'), 'TCP_HIT');
    t.match(header(hit, 'x-request-id'), /^[0-9a-f-]{36}$/, 'answers from the cache carry it too');
    t.equal(header(hit, 'x-svc-node'), 'edge-test-7');
    const refused = await curl(['-H', 'Host: a.com', '-X', 'PURGE', `http://127.0.0.1:${port}/head-miss`]);
    t.match(header(refused, 'x-request-id'), /^[0-9a-f-]{36}$/, 'answers the node makes itself carry it too');
    const other = await curl(['-H', 'Host: b.com', `http://127.0.0.1:${port}/x`]);
    t.equal(header(other, 'x-ctx-id'), undefined, 'off by default');
    t.equal(header(other, 'x-svc-node'), undefined);
    // The id is the one of the host's log lines.
    const accessLog = path.join(server.dir, 'svclog', 'a.com', 'access.log');
    await until(async () => ((await fs.readFile(accessLog, 'utf8').catch(() => '')).includes(` ${id!} `) ? true : undefined), 'the request id in the access log');
  });

  await t.test('svc reload applies an edited file and names the env changes that wait for a restart', async (t) => {
    const setting = JSON.parse(await fs.readFile(server.settingPath, 'utf8')) as Record<string, any>;
    setting.env.cache = { memorySize: '64mb' };
    setting.hosting[1].aliases = ['www.b.com'];
    await fs.writeFile(server.settingPath, JSON.stringify(setting));
    const r = await svc(['reload', ...at]);
    t.equal(r.code, 0, r.stderr);
    t.match(r.stdout, /^reloaded: applied/);
    t.match(r.stdout, 'restart pending: env.cache.memorySize (changes under env take effect at the next svc restart)');
    t.match(await infoLog(server), /env changes wait for a restart \(svc restart\): env\.cache\.memorySize/);
    t.match((await svc(['status', ...at])).stdout, /restart pending: env\.cache\.memorySize/);
  });

  await t.test('svc reload of a refused file exits 1 with each reason at its JSON path; the running setting stays', async (t) => {
    const good = await fs.readFile(server.settingPath, 'utf8');
    const setting = JSON.parse(good) as Record<string, any>;
    setting.hosting[1].listen = 'nowhere';
    await fs.writeFile(server.settingPath, JSON.stringify(setting));
    const bad = await svc(['reload', ...at]);
    t.equal(bad.code, 1, 'systemctl reload fails with it');
    t.match(bad.stderr, /reload refused \(error 4\); the running setting stays\nhosting\[1\]\.listen: must be/);
    setting.hosting[1].listen = `127.0.0.1:${port}`;
    setting.hosting[1].https = [{ cert: 'certs/missing.crt', key: 'certs/missing.key' }];
    await fs.writeFile(server.settingPath, JSON.stringify(setting));
    const missing = await svc(['reload', ...at]);
    t.equal(missing.code, 1);
    t.match(missing.stderr, 'hosting[1].https[0].cert: linked file not found: certs/missing.crt');
    t.match(await infoLog(server), /setting refused from deploy\/local/);
    await fs.writeFile(server.settingPath, good);
    const b = await curl(['-H', 'Host: b.com', `http://127.0.0.1:${port}/still`]);
    t.match(b, /^HTTP\/1\.1 200/, 'the node serves on the running setting');
  });

  await t.test('a busy management port stops a start with the setting file and the errno named', async (t) => {
    // Its own home beside the running node's: only the management port is shared.
    await fs.mkdir(path.join(dir, 'other'));
    const other = path.join(dir, 'other', 'setting.json');
    const setting = JSON.parse(await fs.readFile(server.settingPath, 'utf8')) as Record<string, any>;
    setting.hosting = [{ name: 'c.com', listen: `127.0.0.1:${await freePort()}`, origin: { address: [`127.0.0.1:${origin.port}`] } }];
    setting.env.management.cluster.meta.baseHostingPort = await freePort();
    setting.env.log.meta.port = await freePort();
    await fs.writeFile(other, JSON.stringify(setting));
    const r = await svc(['start', '--setting', other]);
    t.equal(r.code, 1);
    t.match(r.stderr, `the node cannot start with ${other}:`);
    t.match(r.stderr, new RegExp(`127\\.0\\.0\\.1:${server.apiPort} \\(env\\.management\\.api\\.port\\): listen EADDRINUSE`));
  });

  await t.test('enableRestart granted by a reload (env access rules apply at once): svc restart was 401, svc stop then works', async (t) => {
    const denied = await svc(['restart', ...at]);
    t.equal(denied.code, 1);
    t.match(denied.stderr, /restart failed \(401\)/);
    const setting = JSON.parse(await fs.readFile(server.settingPath, 'utf8')) as Record<string, any>;
    setting.env.management.api.roles = [{ name: 'admin', permissions: { enableSetting: true, enableMonitoring: true, enableRestart: true } }];
    await fs.writeFile(server.settingPath, JSON.stringify(setting));
    const reload = await svc(['reload', ...at]);
    t.equal(reload.code, 0, reload.stderr);
    t.notMatch(reload.stdout, /roles/, 'the roles are not among the changes that wait');
    // stop is gated by enableRestart as restart is, and ends the file's node at once.
    const stop = await svc(['stop', ...at]);
    t.equal(stop.code, 0, stop.stderr);
    t.equal(await server.exited, 0, 'the node drained and exited 0');
  });

  await until(async () => (notify.lines.some((l) => l.includes('STOPPING=1')) ? true : undefined), 'STOPPING=1 at the stop');
});
