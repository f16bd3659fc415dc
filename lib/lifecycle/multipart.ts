// multipart/form-data bodies of the management API (the setting upload, the license update),
// read by busboy, the parser fastify, multer and formerly hyper-express use. The API hands routes
// the whole body as one Buffer (bounded at 64 MiB by the server), so busboy is fed that Buffer
// and the parts are collected whole; callers get the same `Part` list the hand-written reader
// gave. What busboy would let pass quietly is refused here: a part over a size limit (busboy
// truncates it), file parts over the `files` limit (busboy skips them) and a body cut off before
// its closing boundary.
//
// Options: `preservePath` keeps a file name's folders (the parts of an upload are placed by
// them); `defParamCharset: 'utf8'` reads a raw UTF-8 `filename="..."` as browsers send it
// (`filename*=UTF-8''...`, RFC 5987, is decoded by busboy and preferred); `defCharset:
// 'latin1'` hands the value of a part without a file name (a field, to busboy) byte for byte
// when it declares no charset, which is how curl's `-F name=<file` and browsers send one (so a
// package sent that way keeps its bytes). A field that declares a charset comes decoded by it
// and is kept as the Latin-1 bytes of that text: exact for ASCII and Latin-1; other text must be
// sent as a file (with a file name), whose bytes are never decoded.
import busboy from 'busboy';

export interface Part {
  name: string;
  filename?: string;
  /** The part's media type (`type/subtype`, no parameters; busboy's `text/plain` when none). */
  contentType?: string;
  data: Buffer;
}

export interface MultipartLimits {
  /** Most file parts (a file name, or application/octet-stream); one more is refused. */
  files?: number;
  /** Most bytes of one part; a larger part is refused. */
  partSize?: number;
}

/** A body over one of the `MultipartLimits`: refused rather than cut short. */
export class MultipartLimitError extends Error {
  constructor(readonly limit: keyof MultipartLimits, message: string) {
    super(message);
    this.name = 'MultipartLimitError';
  }
}

/** busboy's errors, said for the operator who sent the body. */
function explain(err: Error): Error {
  const m = err.message;
  if (/boundary not found/i.test(m)) return new Error('multipart/form-data without a boundary');
  if (/unexpected end of (form|file)/i.test(m)) return new Error('the body ends before its closing boundary (cut off, or not multipart)');
  if (/malformed part header/i.test(m)) return new Error('a part has malformed headers');
  return err;
}

/**
 * Every part of the body that has a name, in order; rejects a body that is not well-formed
 * multipart (message from `explain`) or is over `limits` (MultipartLimitError).
 */
export function parseMultipart(body: Buffer, contentType: string, limits: MultipartLimits = {}): Promise<Part[]> {
  // busboy flags a part as cut once it reaches the size limit, even when it ends right there;
  // one byte more flags exactly the parts larger than partSize.
  const size = (limits.partSize ?? Infinity) + 1;
  let bb: busboy.Busboy;
  try {
    bb = busboy({
      headers: { 'content-type': contentType },
      preservePath: true,
      defParamCharset: 'utf8',
      defCharset: 'latin1',
      limits: { files: limits.files, fileSize: size, fieldSize: size },
    });
  } catch (err) {
    return Promise.reject(explain(err as Error));
  }
  return new Promise((resolve, reject) => {
    const parts: Part[] = [];
    let refused: Error | undefined;
    const tooLarge = (name: string | undefined): void => {
      refused ??= new MultipartLimitError('partSize', `part "${name ?? ''}" is larger than ${limits.partSize} bytes`);
    };
    bb.on('file', (name: string | undefined, stream, info) => {
      const chunks: Buffer[] = [];
      const part: Part = { name: name ?? '', ...(info.filename === undefined ? {} : { filename: info.filename }), contentType: info.mimeType, data: Buffer.alloc(0) };
      if (name !== undefined) parts.push(part);
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('limit', () => tooLarge(name));
      stream.on('end', () => { part.data = Buffer.concat(chunks); });
      // A cut-off file ends the parser with an error too; that one is reported.
      stream.on('error', () => {});
    });
    bb.on('field', (name: string | undefined, value, info) => {
      if (info.valueTruncated) tooLarge(name);
      if (name !== undefined) parts.push({ name, contentType: info.mimeType, data: Buffer.from(value, 'latin1') });
    });
    bb.on('filesLimit', () => {
      refused ??= new MultipartLimitError('files', `the body holds more than ${limits.files} file parts`);
    });
    bb.on('error', (err: Error) => reject(explain(err)));
    bb.on('close', () => (refused === undefined ? resolve(parts) : reject(refused)));
    bb.end(body);
  });
}
