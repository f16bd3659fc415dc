// bench/prof/perfsplit.mjs A.rep A_REQUESTS B.rep B_REQUESTS [TOP]: perfsplit.sh's table. Each
// .rep is `perf report -F period,sym -t "|"` of one peer's run (period: ns of CPU) and REQUESTS
// wrk's count over the same run: us per request by symbol for A and B, B - A, summed by kind, and
// the TOP symbols B spends most more on (and the few it spends less on). A JIT name keeps its
// function and file (the code's address and tier marks are dropped), so the same function of
// either peer is one row.
import fs from 'node:fs';

const [aFile, aReq, bFile, bReq, top = '30'] = process.argv.slice(2);

/** The kind a symbol is counted under. */
function kindOf(sym) {
  if (sym.startsWith('[k]')) return 'kernel';
  if (!sym.includes('JS:')) return 'native (V8, GC, node C++, libc)';
  // A file:// URL is the peer's own code (our dist/lib, node-bare's script); node's are node:…
  return sym.includes('file://') ? "the peer's own JavaScript" : 'node JavaScript';
}

/** `JS:*'name file:///…/dist/lib/x.js:1:2` -> `JS: name lib/x.js:1`; other symbols as perf printed them. */
function nameOf(sym) {
  return sym.replace(/^\[\.\] JS:[*+~^]?'?/, 'JS: ').replace(/file:\/\/\/\S*?\/dist\//, '').replace(/:(\d+):\d+$/, ':$1').trim();
}

function read(file, requests) {
  const us = new Map();
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    if (line.startsWith('#') || !line.includes('|')) continue;
    const [period, sym] = line.split('|');
    const ns = Number(period);
    if (!(ns > 0)) continue;
    const key = `${kindOf(sym.trim())}\t${nameOf(sym)}`;
    us.set(key, (us.get(key) ?? 0) + ns / 1000 / Number(requests));
  }
  return us;
}

const a = read(aFile, aReq);
const b = read(bFile, bReq);
const rows = [...new Set([...a.keys(), ...b.keys()])].map((k) => {
  const [kind, name] = k.split('\t');
  return { kind, name, a: a.get(k) ?? 0, b: b.get(k) ?? 0 };
});
const sum = (list, f) => list.reduce((s, r) => s + f(r), 0);
const f1 = (x) => x.toFixed(2).padStart(7);
console.log(`A ${aReq} requests, B ${bReq}: us per request (B, A, B - A)`);
console.log(`${f1(sum(rows, (r) => r.b))}${f1(sum(rows, (r) => r.a))}${f1(sum(rows, (r) => r.b - r.a))}  total`);
for (const kind of [...new Set(rows.map((r) => r.kind))].sort()) {
  const of = rows.filter((r) => r.kind === kind);
  console.log(`${f1(sum(of, (r) => r.b))}${f1(sum(of, (r) => r.a))}${f1(sum(of, (r) => r.b - r.a))}  ${kind}`);
}
rows.sort((x, y) => (y.b - y.a) - (x.b - x.a));
console.log(`\nB spends more on (top ${top}):`);
for (const r of rows.slice(0, Number(top))) console.log(`${f1(r.b)}${f1(r.a)}${f1(r.b - r.a)}  ${r.name.slice(0, 110)}`);
console.log('\nB spends less on (top 5):');
for (const r of rows.slice(-5).reverse()) console.log(`${f1(r.b)}${f1(r.a)}${f1(r.b - r.a)}  ${r.name.slice(0, 110)}`);
