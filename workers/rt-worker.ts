// Entry point of an RT worker process (forked by the primary through node:cluster).
import { runWorker } from '../lib/worker/main.js';

runWorker();
