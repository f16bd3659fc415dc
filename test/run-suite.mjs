// `npm test`: runs tap with the arguments given, passes its TAP output through unchanged, and
// ends with the list of what failed (file > subtest > assertion, with its diagnostics).
//
// Why: a CI log is often kept only as its last lines, while a failure of the whole suite may be
// thousands of lines above its end; the list at the end says which test failed without the rest.
// The exit code is tap's.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

const DIAG_LINES = 40;
const tap = spawn('tap', process.argv.slice(2), { stdio: ['inherit', 'pipe', 'inherit'] });
/** The names of the open subtests, by indent depth (4 spaces a level). */
const path = [];
const failures = [];
let last; // the last failure, whose YAML diagnostics may follow its line
let reading = false; // inside that YAML block

createInterface({ input: tap.stdout }).on('line', (line) => {
  process.stdout.write(`${line}\n`);
  const depth = (line.length - line.trimStart().length) >> 2;
  const text = line.trim();
  if (reading) {
    if (text === '...') reading = false;
    else if (last.diag.length < DIAG_LINES) last.diag.push(line.slice(0, 300));
    return;
  }
  if (last !== undefined && text === '---') { reading = true; return; }
  last = undefined;
  const subtest = /^# Subtest: (.*)$/.exec(text);
  if (subtest !== null) { path.length = depth; path[depth] = subtest[1]; return; }
  const failed = /^not ok \d+ - ([^#]*)/.exec(text);
  if (failed === null) return;
  const name = failed[1].trim();
  // A subtest's own "not ok" repeats what its failed assertions said; list only those.
  if (path[depth] === name) { path.length = depth; return; }
  last = { where: [...path.slice(0, depth), name].join(' > '), diag: [] };
  failures.push(last);
});

tap.on('close', (code, signal) => {
  if (failures.length > 0) {
    process.stdout.write(`\n# ${failures.length} failed:\n`);
    for (const f of failures) process.stdout.write(`#   ${f.where}\n${f.diag.map((l) => `#     ${l.trim()}`).join('\n')}\n`);
  }
  process.exitCode = code ?? (signal === null ? 1 : 128);
});
