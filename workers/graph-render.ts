// Entry point of the graph render thread (piscina, started by lib/graph/renderer.ts): draws one
// graph per task and hands back its PNG bytes.
import { drawGraph, type DrawJob } from '../lib/graph/draw.js';

export default function render(job: DrawJob): Uint8Array {
  return drawGraph(job);
}
