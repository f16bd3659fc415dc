// The import rules of docs/pipeline.md (.dependency-cruiser.mjs, run by `npm run lint`) catch
// what they name. A small tree in a temporary directory breaks each rule once, and keeps a few
// imports the rules allow; dependency-cruiser runs on it with the project's own configuration,
// as lint does, and must name exactly the broken rules.
import t from 'tap';
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const depcruise = path.join(root, 'node_modules/dependency-cruiser/bin/dependency-cruiser.mjs');

/** File -> the files it imports (paths under lib/, without `.ts`). */
const TREE: Record<string, string[]> = {
  // Broken, one rule each.
  'cache/a': ['pipeline/p'],
  'log/a': ['pipeline/p'],
  'pipeline/up': ['worker/w'],
  'worker/w': ['graph/g'],
  'stats/s': ['pipeline/p'],
  'manager/m': ['primary/x'],
  'release/r': ['primary/x'],
  'supervisor/s': ['log/a', 'log/system-log', 'ipc/i'],
  'pipeline/finish': ['pipeline/deliver'],
  'pipeline/parts/x': ['pipeline/lookup'],
  'routing/c1': ['balance/c2'],
  'balance/c2': ['routing/c1'],
  'hook/f1': ['network/f2'],
  'network/f3': ['hook/f4'],
  'origin/l1': ['origin/l2'],
  'origin/l2': ['origin/l1'],
  'pipeline/q1': ['pipeline/q2'],
  'pipeline/q2': ['pipeline/q1'],
  // The transaction record has no exception any more: a circle through it fails like any other.
  'pipeline/parts/transaction': ['pipeline/parts/host-runtime'],
  'pipeline/parts/host-runtime': ['pipeline/parts/transaction'],
  'errors/e': ['http/h'],
  // Allowed: the shared part below both sides, the error table below everything, a step reading
  // the record. (An allowed import against the way of a broken one would close a circle of
  // folders, reported too.)
  'pipeline/p': ['record/r', 'ipc/i'],
  'primary/x': ['ipc/i', 'record/r', 'tls/t'],
  'manager/ok': ['tls/t', 'setting/s'],
  'files/f': ['errors/ok'], 'errors/ok': [], 'http/h': [],
  'pipeline/deliver': ['pipeline/parts/transaction'],
  'network/f2': [], 'hook/f4': [], 'pipeline/lookup': [],
  'graph/g': [], 'record/r': [], 'ipc/i': [], 'tls/t': ['setting/s'], 'setting/s': [], 'log/system-log': [],
};

/**
 * What must be reported: the rule and the files of the import (a circle once, whichever file it
 * starts at; a circle of folders names the folders).
 */
const EXPECTED = [
  'cache-is-a-library lib/cache/a.ts lib/pipeline/p.ts',
  'shared-below-both lib/log/a.ts lib/pipeline/p.ts',
  'pipeline-not-up lib/pipeline/up.ts lib/worker/w.ts',
  'worker-not-primary lib/graph/g.ts lib/worker/w.ts',
  'primary-not-worker lib/pipeline/p.ts lib/stats/s.ts',
  'manager-through-rt-bridge lib/manager/m.ts lib/primary/x.ts',
  'release-is-a-library lib/primary/x.ts lib/release/r.ts',
  'supervisor-only-ipc lib/log/a.ts lib/supervisor/s.ts',
  'stages-run-forward lib/pipeline/deliver.ts lib/pipeline/finish.ts',
  'parts-below-steps lib/pipeline/lookup.ts lib/pipeline/parts/x.ts',
  'no-cross-folder-cycles lib/balance/c2.ts lib/routing/c1.ts',
  'no-folder-cycles lib/balance lib/routing',
  'no-folder-cycles lib/hook lib/network',
  'no-cycles lib/origin/l1.ts lib/origin/l2.ts',
  'no-cycles lib/pipeline/q1.ts lib/pipeline/q2.ts',
  'no-cycles lib/pipeline/parts/host-runtime.ts lib/pipeline/parts/transaction.ts',
  'errors-is-a-leaf lib/errors/e.ts lib/http/h.ts',
];

async function writeTree(dir: string): Promise<void> {
  await fs.writeFile(path.join(dir, 'tsconfig.json'), JSON.stringify({
    compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', strict: true }, include: ['lib/**/*.ts'],
  }));
  for (const [file, imports] of Object.entries(TREE)) {
    const at = path.join(dir, 'lib', `${file}.ts`);
    await fs.mkdir(path.dirname(at), { recursive: true });
    const lines = imports.map((to, i) => {
      let rel = path.relative(path.dirname(at), path.join(dir, 'lib', to));
      if (!rel.startsWith('.')) rel = `./${rel}`;
      return `import type { X as X${i} } from '${rel}.js';\n`;
    });
    await fs.writeFile(at, `${lines.join('')}export type X = ${imports.length === 0 ? 'number' : imports.map((_, i) => `X${i}`).join(' | ')};\n`);
  }
}

/** Runs dependency-cruiser as lint does: the exit code and the lines of its `err` report. */
function cruise(dir: string): Promise<{ code: number; out: string }> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [depcruise, 'lib', '--config', path.join(root, '.dependency-cruiser.mjs'), '--output-type', 'err'],
      { cwd: dir, timeout: 60_000 }, (err, stdout, stderr) => {
        if (err !== null && typeof err.code !== 'number') reject(err);
        else resolve({ code: err === null ? 0 : Number(err.code), out: stdout + stderr });
      });
  });
}

t.test('a wrong-way import fails lint with the name of the rule it breaks', async (t) => {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'import-rules-'));
  t.teardown(() => fs.rm(dir, { recursive: true, force: true }));
  await writeTree(dir);
  const { code, out } = await cruise(dir);
  t.not(code, 0, 'dependency-cruiser fails');
  // `error RULE: FROM → TO`; a circle is `error RULE: FROM →` with the circle's files below it.
  const found = out.split(/^\s*error /m).slice(1).map((block) => {
    const [rule, rest = ''] = block.split(': ');
    const files = [...new Set(rest.match(/lib\/[\w/.-]+/g) ?? [])].sort();
    return `${rule} ${files.join(' ')}`;
  });
  t.same([...new Set(found)].sort(), EXPECTED.slice().sort(), 'each broken rule is named, and nothing else', { output: out });
});

t.test('every rule of the configuration is broken once above', async (t) => {
  const config = (await import(pathToFileURL(path.join(root, '.dependency-cruiser.mjs')).href)) as { default: { forbidden: { name: string }[] } };
  const names = [...new Set(config.default.forbidden.map((r) => r.name))].sort();
  t.same([...new Set(EXPECTED.map((e) => e.split(' ')[0]))].sort(), names, 'a rule without a broken import here would go untested');
});

t.test('every folder of lib/ is placed on a floor of the rules, so none escapes them', async (t) => {
  const config = (await import(pathToFileURL(path.join(root, '.dependency-cruiser.mjs')).href)) as { FLOORS: Record<string, string[]> };
  const placed = new Set(Object.values(config.FLOORS).flat());
  const folders = (await fs.readdir(path.join(root, 'lib'), { withFileTypes: true })).filter((d) => d.isDirectory()).map((d) => d.name);
  t.same(folders.filter((f) => !placed.has(f)), [], 'folders that no rule knows');
});
