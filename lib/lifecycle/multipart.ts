// A small multipart/form-data reader for the setting upload. The management API hands routes
// the whole body as one Buffer (bounded at 64 MiB by the server), so a streaming parser would
// buy nothing; this reads the parts straight out of that Buffer.

export interface Part {
  name: string;
  filename?: string;
  contentType?: string;
  data: Buffer;
}

/** The boundary of a `multipart/form-data` content type, or undefined when it has none. */
export function boundaryOf(contentType: string): string | undefined {
  const m = /;\s*boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType);
  return m?.[1] ?? m?.[2];
}

function param(header: string, key: string): string | undefined {
  // filename*= (RFC 5987) is preferred when a client sends both.
  const ext = new RegExp(`;\\s*${key}\\*=(?:[^']*)'[^']*'([^;]+)`, 'i').exec(header);
  if (ext !== null) {
    try {
      return decodeURIComponent(ext[1]!.trim());
    } catch { /* fall back to the plain form */ }
  }
  const m = new RegExp(`;\\s*${key}=(?:"((?:[^"\\\\]|\\\\.)*)"|([^;]*))`, 'i').exec(header);
  if (m === null) return undefined;
  return m[1] !== undefined ? m[1].replace(/\\(.)/g, '$1') : m[2]!.trim();
}

/** Every part of the body; throws on a body that is not well-formed multipart. */
export function parseMultipart(body: Buffer, boundary: string): Part[] {
  const delim = Buffer.from(`--${boundary}`);
  const parts: Part[] = [];
  let pos = body.indexOf(delim);
  if (pos < 0) throw new Error('multipart body has no boundary line');
  for (;;) {
    pos += delim.length;
    // `--` after a delimiter ends the body.
    if (body[pos] === 0x2d && body[pos + 1] === 0x2d) return parts;
    const headStart = body.indexOf('\r\n', pos);
    if (headStart < 0) throw new Error('multipart part is cut off');
    const headEnd = body.indexOf('\r\n\r\n', headStart);
    if (headEnd < 0) throw new Error('multipart part has no end of headers');
    const next = body.indexOf(Buffer.concat([Buffer.from('\r\n'), delim]), headEnd + 4);
    if (next < 0) throw new Error('multipart body has no closing boundary');
    const headers = body.subarray(headStart + 2, headEnd).toString('utf8').split('\r\n');
    let disposition = '';
    let contentType: string | undefined;
    for (const h of headers) {
      const i = h.indexOf(':');
      if (i < 0) continue;
      const key = h.slice(0, i).trim().toLowerCase();
      const value = h.slice(i + 1).trim();
      if (key === 'content-disposition') disposition = value;
      else if (key === 'content-type') contentType = value;
    }
    const name = param(disposition, 'name');
    if (name !== undefined) {
      const filename = param(disposition, 'filename');
      parts.push({
        name,
        ...(filename === undefined ? {} : { filename }),
        ...(contentType === undefined ? {} : { contentType }),
        data: body.subarray(headEnd + 4, next),
      });
    }
    pos = next + 2;
  }
}
