// Entry point of the pagedesk edit thread (piscina, started by lib/pagedesk/pool.ts): one HTML
// edit per task, off the worker's event loop.
import { runEdit, type EditJob, type EditResult } from '../lib/pagedesk/edit.js';

export default function edit(job: EditJob): EditResult {
  return runEdit(job);
}
