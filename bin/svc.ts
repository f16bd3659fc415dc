#!/usr/bin/env node
// Entry point of every svc command (and of the primary, which the supervisor forks through it).
// It checks the runtime first and loads the command line only on the pinned Node: native
// modules built for another ABI crash the process instead of failing (lib/cli/runtime.ts).
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { runtimeRefusal } from '../lib/cli/runtime.js';

const projectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const refusal = runtimeRefusal(process.version, process.execPath, projectRoot);
if (refusal !== undefined) {
  process.stderr.write(`${refusal}\n`);
  process.exit(2);
}
const { run } = await import('../lib/cli/main.js');
run();
