import { PassThrough, Readable, Writable } from 'node:stream';
import t from 'tap';
import { pipeBody } from '../../lib/pipeline/parts/pipe-body.js';

const outcome = (src: Readable, dst: Writable): Promise<Error | undefined> => new Promise((resolve) => pipeBody(src, dst, resolve));

t.test('a body is copied whole and done reports success once', async (t) => {
  const got: Buffer[] = [];
  const dst = new Writable({ write(chunk: Buffer, _e, cb) { got.push(chunk); cb(); } });
  const err = await outcome(Readable.from([Buffer.from('ab'), Buffer.from('cd')]), dst);
  t.equal(err, undefined);
  t.equal(Buffer.concat(got).toString(), 'abcd');
});

t.test('a destination that goes away early destroys the source and reports a premature close', async (t) => {
  const src = new PassThrough();
  const dst = new PassThrough();
  const done = outcome(src, dst);
  src.write('part');
  dst.destroy();
  const err = await done;
  t.equal((err as NodeJS.ErrnoException | undefined)?.code, 'ERR_STREAM_PREMATURE_CLOSE');
  t.ok(src.destroyed, 'the source (the origin body) is released');
});

t.test('a failing source destroys the destination and reports its error', async (t) => {
  const src = new PassThrough();
  const dst = new PassThrough();
  const done = outcome(src, dst);
  src.destroy(new Error('origin reset'));
  t.equal((await done)?.message, 'origin reset');
  t.ok(dst.destroyed, 'the client answer is cut, the only signal left once the head is out');
});
