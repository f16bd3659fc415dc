// The files of deploy/: the systemd unit passes `systemd-analyze verify`, the production setting
// passes `svc validate` (with its certificates present), and the container file builds where a
// Docker engine runs (CI here has the client only: the build is skipped, saying so).
import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';
import { projectRoot } from '../helpers/server.js';
import { svc } from '../lifecycle/fixtures/node.js';
import { makeCert } from '../e2e/tls/helpers.js';

const run = promisify(execFile);

t.test('the systemd unit passes systemd-analyze verify and has what production needs', async (t) => {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'svc-unit-'));
  t.teardown(() => fs.rm(dir, { recursive: true, force: true }));
  const unit = path.join(dir, 'svc.service');
  // The unit runs the release's bundled node, which this machine has under the checkout rather
  // than under /usr/local/svc: verify checks that every command is executable, so the copy
  // points at the checkout's bundled node (same binary, same relative place in the release).
  const original = await fs.readFile(path.join(projectRoot, 'deploy/svc.service'), 'utf8');
  const bundled = '/usr/local/svc/app/current/node_modules/.bin/node ';
  t.match(original, new RegExp(`^ExecStart=${bundled}/usr/local/svc/app/current/dist/bin/svc\\.js start`, 'm'), 'the service runs the bundled runtime');
  t.match(original, new RegExp(`^ExecReload=${bundled}/usr/local/svc/app/current/dist/bin/svc\\.js reload --setting /usr/local/svc/setting\\.json$`, 'm'),
    'systemctl reload runs svc reload, which fails when the file is refused');
  t.notMatch(original, /^ExecReload=.*kill/m, 'not a signal, which cannot report a refusal');
  await fs.writeFile(unit, original.replaceAll(bundled, `${path.join(projectRoot, 'node_modules/.bin/node')} `));
  const r = await run('systemd-analyze', ['verify', unit]).then((x) => ({ code: 0, stderr: x.stderr }), (e: { code: number; stderr: string }) => e);
  t.equal(r.code, 0, r.stderr);
  t.equal(r.stderr.trim(), '', 'no warning');
  const text = await fs.readFile(unit, 'utf8');
  for (const line of ['Restart=on-failure', 'LimitNOFILE=1048576', 'AmbientCapabilities=CAP_NET_BIND_SERVICE', 'CapabilityBoundingSet=CAP_NET_BIND_SERVICE',
    'NoNewPrivileges=true', 'ProtectSystem=strict', 'ProtectHome=true', 'PrivateTmp=true', 'User=svc', 'ReadWritePaths=/usr/local/svc /svclog']) {
    t.match(text, new RegExp(`^${line}`, 'm'), line);
  }
  // Readiness: the supervisor runs systemd-notify --ready (a child of the main process, hence
  // NotifyAccess=all) once the API answers; test/cli/operate.test.ts receives it on a socket.
  t.match(text, /^Type=notify$/m, 'readiness by sd_notify');
  t.match(text, /^NotifyAccess=all$/m);
  t.notMatch(text, /^ExecStartPost=/m, 'no polling');
  // systemd's own hardening score (lower is better): 6.2 before Type=notify, whose
  // NotifyAccess=all alone costs 0.2; the kernel protections bring it down.
  const sec = await run('systemd-analyze', ['security', '--offline=true', unit]);
  const exposure = Number(/Overall exposure level for svc\.service: (\d+(?:\.\d+)?)/.exec(sec.stdout + sec.stderr)?.[1]);
  t.ok(exposure <= 4.5, `systemd-analyze security exposure ${exposure}`);
});

t.test('the production setting passes svc validate, with TLS, the logs, the statistics collector and an install repository', async (t) => {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'svc-prod-'));
  t.teardown(() => fs.rm(dir, { recursive: true, force: true }));
  const setting = JSON.parse(await fs.readFile(path.join(projectRoot, 'deploy/setting.json'), 'utf8')) as {
    env: { home: string; cache: { indexPath: string }; log: { info: { enable: boolean }; watch: { enable: boolean } }; management: { cluster: { stats: { enable: boolean } } } };
    hosting: { https: { cert: string }[] }[];
  };
  t.equal(setting.env.home, '/usr/local/svc');
  t.ok(setting.env.log.info.enable && setting.env.log.watch.enable, 'info and watch logs on');
  t.ok(setting.env.management.cluster.stats.enable, 'the collector the container health check asks');
  t.ok(setting.hosting[0]!.https.length > 0, 'TLS on');
  // Its certificates, made here, under a home of the test's own.
  await fs.mkdir(path.join(dir, 'certs'));
  makeCert(path.join(dir, 'certs'), 'www.example.com', 'www.example.com', { sans: ['example.com'] });
  setting.env.home = dir;
  setting.env.cache.indexPath = path.join(dir, 'index.sqlite');
  const file = path.join(dir, 'setting.json');
  await fs.writeFile(file, JSON.stringify(setting));
  const r = await svc(['validate', file]);
  t.equal(r.code, 0, r.stderr);
  t.match(r.stdout, /OK/);
  await fs.rm(path.join(dir, 'certs/www.example.com.crt'));
  const missing = await svc(['validate', file]);
  t.equal(missing.code, 1, 'without its certificate it is refused');
  t.match(missing.stderr, /^error 5: linked file not found\nhosting\[0\]\.https\[0\]\.cert: linked file not found: /, 'named by its JSON path');
});

function dockerEngine(): boolean {
  try {
    execFileSync('docker', ['info'], { stdio: 'ignore', timeout: 10_000 });
    return true;
  } catch {
    return false;
  }
}

const noEngine = dockerEngine() ? false : 'no Docker engine on this machine (CI has none): the build is not tried';
t.test('the container file builds where a Docker engine runs', { skip: noEngine }, async (t) => {
  const r = await run('docker', ['build', '-f', 'deploy/Containerfile', '-t', 'svc-edge:test', '.'], { cwd: projectRoot, timeout: 900_000 })
    .then(() => 0, (e: { code: number }) => e.code);
  t.equal(r, 0, 'docker build succeeds');
});
