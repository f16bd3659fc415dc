// The log batches a worker ships reach the primary's writer whole and in order, however the pipe
// cuts the byte stream (a pipe read carries at most 64 KiB; a batch is often longer).
import t from 'tap';
import { FrameReader, LogShipper, type LogBatch } from '../../lib/log/ship.js';

function shippedFrames(lines: Array<[string, string]>): Buffer {
  const frames: Buffer[] = [];
  const shipper = new LogShipper((f) => frames.push(Buffer.from(f)));
  for (const [host, line] of lines) shipper.add('access', host, line);
  shipper.flush();
  return Buffer.concat(frames);
}

function received(stream: Buffer, cut: (at: number) => number): LogBatch[] {
  const out: LogBatch[] = [];
  const reader = new FrameReader((b) => out.push(b));
  for (let at = 0; at < stream.length;) {
    const n = Math.max(1, Math.min(cut(at), stream.length - at));
    reader.push(stream.subarray(at, at + n));
    at += n;
  }
  return out;
}

const lines: Array<[string, string]> = [];
for (let i = 0; i < 3000; i++) lines.push([i % 3 === 0 ? 'a.test' : 'bé.test', `line ${i} ${'x'.repeat(i % 200)} ü\n`]);
const stream = shippedFrames(lines);

function joined(batches: LogBatch[], host: string): string {
  return batches.filter((b) => b.host === host && b.kind === 'access').map((b) => b.text.toString()).join('');
}
const expected = (host: string): string => lines.filter(([h]) => h === host).map(([, l]) => l).join('');

t.test('frames longer than a pipe read arrive whole, in order, for each host', async (t) => {
  t.ok(stream.length > 128 * 1024, 'the batches span several pipe reads');
  for (const [name, cut] of [['64 KiB reads', () => 65536], ['one byte at a time', () => 1], ['7-byte reads', () => 7],
    ['uneven reads', (at: number) => 1 + ((at * 7919) % 9000)], ['the whole stream at once', () => stream.length]] as const) {
    const got = received(stream, cut);
    t.equal(joined(got, 'a.test'), expected('a.test'), `${name}: a.test`);
    t.equal(joined(got, 'bé.test'), expected('bé.test'), `${name}: bé.test`);
  }
});

t.test('a stream that is not frames is dropped, and frames after a fresh start are read', async (t) => {
  const out: LogBatch[] = [];
  const reader = new FrameReader((b) => out.push(b));
  reader.push(Buffer.alloc(16));
  t.equal(out.length, 0, 'nothing delivered from zeros');
  reader.push(stream);
  t.equal(joined(out, 'a.test'), expected('a.test'));
});
