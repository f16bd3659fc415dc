// The import rules of docs/pipeline.md ("Layout and import direction"), one named rule per
// arrow, checked by `npm run lint` (so by `npm test`). A wrong-way import fails with the rule's
// name; change the rule and that page together. Type-only imports count: a type read the wrong
// way ties the two sides as surely as a value does.
import { readFileSync } from 'node:fs';

/** `^lib/(a|b)/`: files of these top-level folders of lib/. */
const under = (...folders) => `^lib/(${folders.join('|')})/`;

/** Leaves every folder may import, the libraries included: the table of error codes. */
const LEAVES = ['errors'];
/** The libraries both sides build on. */
const LIBRARIES = ['cache', 'origin', 'balance', 'routing', 'access', 'http', 'files'];
/** What both processes read: shapes, checks, message types, the logs, the rule compilers. */
const SHARED = ['ipc', 'log', 'setting', 'setting-check', 'tls', 'record', 'rules', 'network', 'hook', 'pagedesk', 'license'];
/** The worker process: the request path and what drives it. */
const WORKER_SIDE = ['pipeline', 'worker'];
/** The primary process and what only it runs, the supervisor above it, the command line. */
const PRIMARY_SIDE = ['primary', 'manager', 'stats', 'graph', 'lifecycle', 'query', 'release', 'supervisor', 'cli'];

/** Every folder of lib/ stands in one of these (test/structure/import-rules.test.ts checks it). */
export const FLOORS = { LEAVES, LIBRARIES, SHARED, WORKER_SIDE, PRIMARY_SIDE };

/**
 * The request's steps in order, read from the table itself (lib/pipeline/steps.ts `STEPS`), one
 * module each: lib/pipeline/<step>.ts (docs/pipeline.md, "Steps").
 */
const STEPS = JSON.parse(readFileSync(new URL('lib/pipeline/steps.ts', import.meta.url), 'utf8')
  .match(/const STEPS = Object\.freeze\((\[[^\]]*\])/)[1].replace(/'/g, '"').replace(/,\s*\]/, ']'));

const forbid = (name, comment, from, to) => ({ name, comment, severity: 'error', from, to });

export default {
  forbidden: [
    forbid('errors-is-a-leaf',
      'lib/errors (the table of error codes) is imported by every folder, so it imports nothing of lib/ outside itself',
      { path: under(...LEAVES) },
      { path: '^lib/', pathNot: under(...LEAVES) }),
    forbid('cache-is-a-library',
      'lib/cache, lib/origin, lib/balance, lib/routing, lib/access, lib/http and lib/files are libraries: they import nothing of either process or of what the processes share above them',
      { path: under(...LIBRARIES) },
      { path: under(...SHARED.filter((f) => f !== 'setting'), ...WORKER_SIDE, ...PRIMARY_SIDE) }),
    forbid('shared-below-both',
      'what both processes read (ipc, log, setting, setting-check, tls, record, rules, network, hook, pagedesk, license) lives below both: it imports nothing of either side',
      { path: under(...SHARED) },
      { path: under(...WORKER_SIDE, ...PRIMARY_SIDE) }),
    forbid('pipeline-not-up',
      'lib/pipeline imports the libraries and what is shared, never what drives it (lib/worker) nor the primary side',
      { path: under('pipeline') },
      { path: under('worker', ...PRIMARY_SIDE) }),
    forbid('worker-not-primary',
      'lib/worker talks to the primary over lib/ipc only: it imports nothing of the primary side',
      { path: under('worker') },
      { path: under(...PRIMARY_SIDE) }),
    forbid('primary-not-worker',
      'the primary side drives the workers over lib/ipc and never imports lib/worker or lib/pipeline',
      { path: under(...PRIMARY_SIDE) },
      { path: under(...WORKER_SIDE) }),
    forbid('manager-through-rt-bridge',
      'lib/manager reaches the workers only through the RtBridge interface the primary implements: it imports nothing of lib/primary',
      { path: under('manager') },
      { path: under('primary') }),
    forbid('release-is-a-library',
      'lib/release (release packages and their installation) is a library of the command line and the primary: it imports nothing of the processes',
      { path: under('release') },
      { path: under(...WORKER_SIDE, 'primary', 'manager', 'supervisor', 'cli') }),
    forbid('supervisor-only-ipc',
      'lib/supervisor imports only lib/ipc and the system log (it must keep running whatever the primary loads)',
      { path: under('supervisor') },
      { path: '^lib/', pathNot: ['^lib/supervisor/', '^lib/ipc/', '^lib/log/system-log\\.ts$'] }),
    ...STEPS.slice(0, -1).map((step, i) => forbid('stages-run-forward',
      `inside lib/pipeline a step imports only steps after it (${STEPS.join(' -> ')}); an earlier decision reaches a later step as data, or the driver (steps.ts) runs it`,
      { path: `^lib/pipeline/(${STEPS.slice(i + 1).join('|')})\\.ts$` },
      { path: `^lib/pipeline/${step}\\.ts$` })),
    forbid('parts-below-steps',
      'lib/pipeline/parts/ holds what the steps share: it imports no step and not the driver (the table runs the steps, a part does not)',
      { path: '^lib/pipeline/parts/' },
      { path: '^lib/pipeline/[^/]+\\.ts$' }),
    forbid('no-cross-folder-cycles',
      'no import circle runs through two folders of lib/: what both need moves below both',
      { path: '^lib/([^/]+)/' },
      { circular: true, via: { pathNot: '^lib/$1/' } }),
    {
      ...forbid('no-folder-cycles',
        'no two folders import each other, even through different files: one of them is the lower, and what the lower needs of the upper moves down',
        { path: '^lib/' },
        { circular: true }),
      scope: 'folder',
    },
    forbid('no-cycles',
      'no import circle inside a folder either: the shared part moves to a file both import',
      { path: '^lib/([^/]+)/' },
      { circular: true, viaOnly: { path: '^lib/$1/' } }),
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    cache: false,
  },
};
