// What the cache stages see as the origin of an edit URL (`/a.html/pagedesk/edit/default`): it
// asks the node's own cache for the source (`fetchSource`: the source URL's owner worker, so the
// source is one cached object however many edits of it are served), edits it in the edit
// threads and answers with the result. The fetch stage stores that answer under the edit URL,
// with the source's freshness. A source that cannot be edited goes out as it came (error log).
import { Readable } from 'node:stream';
import { reportError } from '../log/global/report.js';
import type { OriginBody, OriginHandler, OriginRequest, OriginResponse } from '../origin/types.js';
import { commandAt, parseCommand, type ExtractSpec } from './command.js';
import type { EditResult } from './edit.js';
import type { EditPool } from './pool.js';
import { MIB, type PagedeskSetting } from './setting.js';

type Fields = Record<string, string | string[]>;

interface SourceAnswer { statusCode: number; headers: Fields; body: Readable }

/** The source through the node's cache: `url` of virtual host `vhost`, with these request fields. */
export type SourceFetch = (vhost: string, url: string, headers: Fields, signal: AbortSignal | undefined) => Promise<SourceAnswer>;

/** Source fields an edit keeps: its freshness and validators of time, not of bytes (no ETag). */
const KEPT = ['cache-control', 'cdn-cache-control', 'expires', 'last-modified', 'date', 'age', 'vary', 'content-language'];
/** Fields of our own answer that deliver writes again. */
const OURS = ['via', 'x-cache', 'x-svc-worker'];

const EDITABLE_TYPE = /^(text\/[\w.+-]+|application\/(xhtml\+xml|json|[\w.-]+\+json))\s*(;|$)/i;
const CHARSET = /;\s*charset\s*=\s*"?([^";\s]+)/i;

export class PagedeskRuntime {
  readonly keyword: string;

  constructor(readonly setting: PagedeskSetting, private readonly vhost: string, private readonly fetchSource: SourceFetch,
    private readonly pool: EditPool) {
    this.keyword = setting.meta.keyword;
  }

  /** The extraction a command asks for; undefined for edit/default. */
  extractOf(url: string): ExtractSpec | undefined {
    const { command } = parseCommand(url, this.keyword, commandAt(url, this.keyword));
    if (command.kind !== 'extract') return undefined;
    const x = this.setting.dom.extract;
    return command.inline ?? { selector: x.selector!, attribute: x.attribute, includeSelf: x.includeSelf };
  }

  edit(text: string, extract: ExtractSpec | undefined, host: string): Promise<EditResult> {
    return this.pool.edit({ text, setting: this.setting, extract, host });
  }

  /** The source bytes allowed (maxSourceSize MiB; 0: no limit). */
  get maxSourceBytes(): number {
    return this.setting.meta.maxSourceSize * MIB;
  }

  request(r: OriginRequest): Promise<OriginResponse> {
    const { source } = parseCommand(r.url, this.keyword, commandAt(r.url, this.keyword));
    const extract = this.extractOf(r.url);
    const headers: Fields = { ...r.headers, 'accept-encoding': 'identity' };
    // The whole source is edited; the cache answers ranges of the stored edit.
    delete headers.range;
    delete headers['if-range'];
    return this.fetchSource(this.vhost, source, headers, r.signal).then((a) => this.answer(a, r.url, extract));
  }

  /** The same as request() for the fetch stage's callback form. */
  dispatch(r: OriginRequest, h: OriginHandler): void {
    this.request(r).then((a) => h.onHead(a, bodyOf(a.body)), (err: unknown) => h.onError(err));
  }

  private async answer(a: SourceAnswer, url: string, extract: ExtractSpec | undefined): Promise<OriginResponse> {
    const fields = withoutOurs(a.headers);
    const type = String(fields['content-type'] ?? '');
    const charset = CHARSET.exec(type)?.[1]?.toLowerCase();
    const coded = fields['content-encoding'] !== undefined && fields['content-encoding'] !== 'identity';
    // Not text we can read (an image, a compressed or non-UTF-8 body) or no content: as it came.
    if (a.statusCode !== 200 || !EDITABLE_TYPE.test(type) || coded || (charset !== undefined && charset !== 'utf-8' && charset !== 'us-ascii')) {
      return response(a.statusCode, fields, a.body);
    }
    const max = this.maxSourceBytes;
    const read = await readUpTo(a.body, max);
    if (read.rest !== undefined) {
      this.report('6001', url, `source larger than maxSourceSize ${this.setting.meta.maxSourceSize} MiB: passed through unedited`);
      return response(200, fields, read.rest);
    }
    const result = await this.edit(read.bytes.toString('utf8'), extract, this.vhost);
    if (result.outcome === 'marked') return response(200, fields, Readable.from([read.bytes]));
    if (result.outcome === 'unedited') {
      this.report('6002', url, result.reason);
      return response(200, fields, Readable.from([read.bytes]));
    }
    if (result.note !== undefined) this.report('6001', url, result.note);
    const body = Buffer.from(result.text);
    const out: Fields = {};
    for (const k of KEPT) if (fields[k] !== undefined) out[k] = fields[k]!;
    out['content-type'] = result.type === 'html' ? 'text/html; charset=utf-8' : result.type === 'plain' ? 'text/plain; charset=utf-8' : type;
    out['content-length'] = String(body.length);
    return response(200, out, Readable.from([body]));
  }

  private report(code: '6001' | '6002', url: string, detail: string): void {
    reportError({ code, vhost: this.vhost, url, detail });
  }
}

function withoutOurs(h: Fields): Fields {
  const out: Fields = { ...h };
  for (const k of OURS) delete out[k];
  return out;
}

function response(statusCode: number, headers: Fields, body: Readable): OriginResponse {
  return { statusCode, headers, body, address: 'pagedesk', ip: '', secondary: false };
}

/**
 * The body whole when it is at most `max` bytes (0: any size); otherwise `rest`, a stream of
 * what was read and what follows, for passing the source through.
 */
function readUpTo(body: Readable, max: number): Promise<{ bytes: Buffer; rest?: Readable }> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (c: Buffer): void => {
      chunks.push(c);
      size += c.length;
      if (max > 0 && size > max) {
        body.off('data', onData).off('end', onEnd).off('error', reject);
        body.pause();
        resolve({ bytes: Buffer.alloc(0), rest: Readable.from(replay(chunks, body)) });
      }
    };
    const onEnd = (): void => resolve({ bytes: Buffer.concat(chunks, size) });
    body.on('data', onData).once('end', onEnd).once('error', reject);
  });
}

async function* replay(head: Buffer[], rest: Readable): AsyncGenerator<Buffer> {
  yield* head;
  for await (const c of rest) yield c as Buffer;
}

/** An answer's Readable as the OriginBody the fetch stage consumes. */
function bodyOf(r: Readable): OriginBody {
  return {
    // Called as methods of the handler: a handler may be an object whose methods use `this`
    // (the fetch step's StoreTee), not only a bag of closures.
    consume: (h) => { r.on('data', (c: Buffer) => h.onData(c)).once('end', () => h.onEnd()).once('error', (e: Error) => h.onError(e)); },
    pause: () => { r.pause(); },
    resume: () => { r.resume(); },
    discard: () => { r.destroy(); },
    readable: () => r,
  };
}
