// The multipart reader of the management API (busboy): parts as the callers see them, file
// names (RFC 5987 and raw UTF-8), and the bodies it refuses rather than reads short.
import t from 'tap';
import { MultipartLimitError, parseMultipart } from '../../lib/lifecycle/multipart.js';
import { stageMultipart, LoadFailure } from '../../lib/lifecycle/candidate.js';
import { multipart } from './fixtures/helpers.js';

const B = 'svc-test-boundary';
const CT = `multipart/form-data; boundary=${B}`;

/** A body of raw part heads and contents, closed unless `close` is false. */
function body(parts: Array<{ head: string; data: Buffer | string }>, close = true): Buffer {
  const chunks = parts.flatMap((p) => [Buffer.from(`--${B}\r\n${p.head}\r\n\r\n`), Buffer.from(p.data), Buffer.from('\r\n')]);
  return Buffer.concat([...chunks, Buffer.from(close ? `--${B}--\r\n` : '')]);
}

t.test('file and field parts come back in order with name, file name, type and exact bytes', async (t) => {
  const gz = Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0xe9, 0xff, 0x00, 0x0d, 0x0a]);
  const parts = await parseMultipart(body([
    { head: 'Content-Disposition: form-data; name="settingFile"; filename="certs/a.pem"\r\nContent-Type: application/x-pem-file', data: 'PEM' },
    { head: 'Content-Disposition: form-data; name="settingFile"', data: gz },
    { head: 'Content-Disposition: form-data; filename="nameless.txt"', data: 'dropped' },
    { head: 'Content-Disposition: form-data; name="note"', data: 'plain text' },
  ]), CT);
  t.equal(parts.length, 3, 'a part without a name is left out');
  t.match(parts[0], { name: 'settingFile', filename: 'certs/a.pem', contentType: 'application/x-pem-file' }, 'the file name keeps its folder');
  t.equal(parts[0]!.data.toString(), 'PEM');
  t.equal(parts[1]!.filename, undefined, 'a field has no file name');
  t.ok(parts[1]!.data.equals(gz), 'a field without a charset keeps its bytes (a gzip package sent with curl -F name=<file)');
  t.equal(parts[2]!.data.toString(), 'plain text');
});

t.test('file names: filename* (RFC 5987) is decoded and preferred, a raw UTF-8 name is read as UTF-8', async (t) => {
  const [ext, raw, quoted] = await parseMultipart(body([
    { head: 'Content-Disposition: form-data; name="f"; filename="fallback.json"; filename*=UTF-8\'\'r%C3%A9sum%C3%A9%20%E6%97%A5.json', data: '1' },
    { head: 'Content-Disposition: form-data; name="f"; filename="résumé.json"', data: '2' },
    { head: 'Content-Disposition: form-data; name="f"; filename="a \\"b\\".json"', data: '3' },
  ]), CT);
  t.equal(ext!.filename, 'résumé 日.json');
  t.equal(raw!.filename, 'résumé.json');
  t.equal(quoted!.filename, 'a "b".json', 'a quoted-pair in a quoted name');
});

t.test('a malformed body is refused with the reason', async (t) => {
  const one = [{ head: 'Content-Disposition: form-data; name="f"; filename="a"', data: 'abc' }];
  await t.rejects(parseMultipart(body(one), 'multipart/form-data'), /without a boundary/);
  await t.rejects(parseMultipart(body(one, false), CT), /ends before its closing boundary/, 'no closing boundary');
  await t.rejects(parseMultipart(body(one).subarray(0, 60), CT), /ends before its closing boundary/, 'cut off inside a part');
  await t.rejects(parseMultipart(Buffer.from(`--${B}\r\nContent-Disposition: form-data; name="f"\r\n`), CT), /ends before its closing boundary/, 'cut off in the part head');
  await t.rejects(parseMultipart(Buffer.from('{"not": "multipart"}'), CT), /ends before its closing boundary/, 'no boundary line at all');
  await t.rejects(parseMultipart(Buffer.alloc(0), CT), /ends before its closing boundary/, 'an empty body');
});

t.test('a limit hit is refused, never read short', async (t) => {
  const files = (n: number): Buffer => body(Array.from({ length: n }, (_, i) => ({ head: `Content-Disposition: form-data; name="f"; filename="f${i}"`, data: 'x' })));
  t.equal((await parseMultipart(files(3), CT, { files: 3 })).length, 3, 'as many file parts as the limit');
  const over = await parseMultipart(files(4), CT, { files: 3 }).catch((e: unknown) => e);
  t.ok(over instanceof MultipartLimitError && over.limit === 'files', 'one more is refused');
  t.match(over, { message: /more than 3 file parts/ });

  const big = body([{ head: 'Content-Disposition: form-data; name="f"; filename="a"', data: 'x'.repeat(11) }]);
  t.equal((await parseMultipart(big, CT, { partSize: 11 })).length, 1, 'a part of exactly partSize');
  const cut = await parseMultipart(big, CT, { partSize: 10 }).catch((e: unknown) => e);
  t.ok(cut instanceof MultipartLimitError && cut.limit === 'partSize', 'a larger file part is refused (busboy truncates it)');
  const field = body([{ head: 'Content-Disposition: form-data; name="f"', data: 'x'.repeat(11) }]);
  const fieldCut = await parseMultipart(field, CT, { partSize: 10 }).catch((e: unknown) => e);
  t.ok(fieldCut instanceof MultipartLimitError && fieldCut.limit === 'partSize', 'so is a larger field');
  const long = body([{ head: 'Content-Disposition: form-data; name="f"', data: 'x'.repeat(2 * 1024 * 1024) }]);
  t.equal((await parseMultipart(long, CT))[0]!.data.length, 2 * 1024 * 1024, 'no limit given: a field over busboy\'s 1 MiB default is whole');
});

t.test('stageMultipart: the upload limits and malformed bodies give their error codes', async (t) => {
  const dir = t.testdir();
  const stage = (m: { body: Buffer; contentType: string }, maxFiles = 4, maxBytes = 1024 * 1024): Promise<unknown> =>
    stageMultipart(m.body, m.contentType, 'settingFile', dir, { maxFiles, maxBytes }).catch((e: unknown) => e);
  const five = multipart(Array.from({ length: 5 }, (_, i) => ({ name: 'settingFile', filename: `f${i}.txt`, data: 'x' })));
  const many = await stage(five);
  t.ok(many instanceof LoadFailure, 'a LoadFailure');
  t.match(many, { code: 2, message: /more than 4 files \(env\.management\.api\.upload\.maxFiles\)/ }, 'five files over maxFiles 4');
  const huge = multipart([{ name: 'settingFile', filename: 'p.tgz', data: Buffer.alloc(2 * 1024 * 1024 + 1, 1) }]);
  t.match(await stage(huge), { code: 2, message: /a part of more than 1 MiB/ }, 'a part far over maxUnpackedSize');
  const cut = multipart([{ name: 'settingFile', filename: 'setting.json', data: '{}' }]);
  t.match(await stage({ ...cut, body: cut.body.subarray(0, cut.body.length - 10) }), { code: 1, message: /malformed multipart body: the body ends before its closing boundary/ });
  t.match(await stage({ ...cut, contentType: 'multipart/form-data' }), { code: 1, message: /without a boundary/ });
});
