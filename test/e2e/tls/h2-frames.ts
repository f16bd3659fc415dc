// A small HTTP/2 client that writes frames by hand, for what a well-behaved client never sends
// (streams reset as fast as they open, a SETTINGS left unacknowledged), and reads back the
// frames the server sends, so a test sees the GOAWAY and its error code as the client gets them.
import net from 'node:net';
import tls from 'node:tls';

const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');

export const FRAME = { DATA: 0, HEADERS: 1, RST_STREAM: 3, SETTINGS: 4, PING: 6, GOAWAY: 7, WINDOW_UPDATE: 8, CONTINUATION: 9 } as const;
export const FLAG = { END_STREAM: 1, ACK: 1, END_HEADERS: 4 } as const;
/** RFC 9113 7: error codes. */
export const ERR = { NO_ERROR: 0, PROTOCOL_ERROR: 1, INTERNAL_ERROR: 2, SETTINGS_TIMEOUT: 4, CANCEL: 8, ENHANCE_YOUR_CALM: 11 } as const;

export interface Frame { type: number; flags: number; stream: number; payload: Buffer }

export function frame(type: number, flags: number, stream: number, payload: Buffer = Buffer.alloc(0)): Buffer {
  const head = Buffer.alloc(9);
  head.writeUIntBE(payload.length, 0, 3);
  head[3] = type;
  head[4] = flags;
  head.writeUInt32BE(stream & 0x7fffffff, 5);
  return Buffer.concat([head, payload]);
}

/**
 * An HPACK block for `GET https://<authority><path>`: the static table's `:method: GET` (2),
 * `:scheme: https` (7) or `http` (6), then `:path` and `:authority` as literals without indexing.
 */
export function getHeaders(authority: string, path: string, scheme: 'https' | 'http' = 'https'): Buffer {
  const literal = (index: number, value: string): Buffer => {
    const v = Buffer.from(value, 'latin1');
    if (v.length > 126) throw new Error('value too long for this encoder');
    return Buffer.concat([Buffer.from([index, v.length]), v]);
  };
  return Buffer.concat([Buffer.from([0x82, scheme === 'https' ? 0x87 : 0x86]), literal(0x04, path), literal(0x01, authority)]);
}

/**
 * HPACK literal field `name: value` (RFC 7541 6.2), new name, no Huffman; `index` true adds it to
 * the dynamic table (6.2.1), false leaves the table alone (6.2.2).
 */
export function literalField(name: string, value: string, index: boolean): Buffer {
  const int7 = (n: number): Buffer => {
    if (n < 127) return Buffer.from([n]);
    const out = [127];
    for (n -= 127; n >= 128; n >>= 7) out.push((n & 0x7f) | 0x80);
    out.push(n);
    return Buffer.from(out);
  };
  return Buffer.concat([Buffer.from([index ? 0x40 : 0x00]), int7(name.length), Buffer.from(name, 'latin1'), int7(value.length), Buffer.from(value, 'latin1')]);
}

export function rstStream(stream: number, code: number): Buffer {
  const p = Buffer.alloc(4);
  p.writeUInt32BE(code);
  return frame(FRAME.RST_STREAM, 0, stream, p);
}

/** The error code of a GOAWAY frame. */
export function goawayCode(f: Frame): number {
  return f.payload.readUInt32BE(4);
}

export class RawH2 {
  readonly frames: Frame[] = [];
  closed = false;
  private buf: Buffer = Buffer.alloc(0);
  private readonly waiters = new Set<() => void>();

  private constructor(readonly socket: net.Socket, private readonly autoAck: boolean) {
    socket.on('data', (chunk: Buffer) => this.read(chunk));
    socket.on('close', () => { this.closed = true; this.wake(); });
    socket.on('error', () => undefined);
  }

  /**
   * Connects (TLS with ALPN h2 trusting `ca`, or plain for h2c), sends the preface and an empty
   * SETTINGS. `autoAck`: acknowledge the server's SETTINGS as a client must.
   */
  static connect(port: number, o: { tls?: { servername: string; ca: Buffer; options?: tls.ConnectionOptions }; autoAck?: boolean } = {}): Promise<RawH2> {
    return new Promise((resolve, reject) => {
      const socket: net.Socket = o.tls === undefined
        ? net.connect(port, '127.0.0.1')
        : tls.connect({ port, host: '127.0.0.1', servername: o.tls.servername, ca: o.tls.ca, ALPNProtocols: ['h2'], ...o.tls.options });
      socket.once(o.tls === undefined ? 'connect' : 'secureConnect', () => {
        socket.off('error', reject);
        if (o.tls !== undefined && (socket as tls.TLSSocket).alpnProtocol !== 'h2') { socket.destroy(); reject(new Error('h2 not negotiated')); return; }
        const c = new RawH2(socket, o.autoAck ?? true);
        socket.write(Buffer.concat([PREFACE, frame(FRAME.SETTINGS, 0, 0)]));
        resolve(c);
      });
      socket.once('error', reject);
    });
  }

  send(bytes: Buffer): void {
    if (!this.socket.destroyed) this.socket.write(bytes);
  }

  /** The first frame (already received or coming) that satisfies `pred`; undefined when the connection closed first or the time ran out. */
  async waitFor(pred: (f: Frame) => boolean, timeoutMs = 10_000): Promise<Frame | undefined> {
    const end = Date.now() + timeoutMs;
    for (;;) {
      const hit = this.frames.find(pred);
      if (hit !== undefined || this.closed || Date.now() > end) return hit;
      await new Promise<void>((r) => {
        const t = setTimeout(() => { this.waiters.delete(wake); r(); }, end - Date.now());
        const wake = (): void => { clearTimeout(t); this.waiters.delete(wake); r(); };
        this.waiters.add(wake);
      });
    }
  }

  /** Waits until the server closed the connection (bounded); true when it did. */
  async waitClosed(timeoutMs = 10_000): Promise<boolean> {
    await this.waitFor(() => false, timeoutMs);
    return this.closed;
  }

  close(): void {
    this.socket.destroy();
  }

  private read(chunk: Buffer): void {
    this.buf = this.buf.length === 0 ? chunk : Buffer.concat([this.buf, chunk]);
    while (this.buf.length >= 9) {
      const len = this.buf.readUIntBE(0, 3);
      if (this.buf.length < 9 + len) break;
      const f: Frame = { type: this.buf[3]!, flags: this.buf[4]!, stream: this.buf.readUInt32BE(5) & 0x7fffffff, payload: this.buf.subarray(9, 9 + len) };
      this.buf = this.buf.subarray(9 + len);
      this.frames.push(f);
      if (this.autoAck && f.type === FRAME.SETTINGS && (f.flags & FLAG.ACK) === 0) this.send(frame(FRAME.SETTINGS, FLAG.ACK, 0));
    }
    this.wake();
  }

  private wake(): void {
    for (const w of [...this.waiters]) w();
  }
}
