// undici destroys the body stream of a request that fails. To try a second address the caller's
// stream must survive that, so undici gets a thin tap per attempt: the tap pulls from the source
// only when undici reads, remembers whether a byte was taken, and on failure lets go of the
// source without destroying it when nothing was taken (the source can then feed the next tap).
import { Readable } from 'node:stream';

export class BodyTap extends Readable {
  /** True once any byte of the source went to undici: from then on a retry would lose data. */
  consumed = false;
  private wanting = false;
  private readonly src: Readable;

  constructor(src: Readable) {
    super();
    this.src = src;
    this.onReadable = this.onReadable.bind(this);
    this.onEnd = this.onEnd.bind(this);
    this.onError = this.onError.bind(this);
    // undici listens for the body's 'error' only while a connection carries the request: a
    // request waiting in the pool queue is options only, and a finished one has let go. A client
    // that disconnects in those moments errors the source and so this tap; unheard, that 'error'
    // would end the worker. The failure itself reaches the request through its abort signal (the
    // client's response closes) or through undici when it reads the destroyed tap.
    this.on('error', ignore);
    if (src.readableEnded) {
      this.push(null);
      return;
    }
    src.on('readable', this.onReadable);
    src.on('end', this.onEnd);
    src.on('error', this.onError);
  }

  override _read(): void {
    this.wanting = true;
    this.pull();
  }

  override _destroy(err: Error | null, cb: (err?: Error | null) => void): void {
    this.detach();
    // Half-sent: the source cannot be replayed, so it is finished too.
    if (err !== null && this.consumed && !this.src.destroyed) this.src.destroy(err);
    cb(err);
  }

  private pull(): void {
    let chunk: unknown;
    while (this.wanting && (chunk = this.src.read()) !== null) {
      this.consumed = true;
      if (!this.push(chunk)) this.wanting = false;
    }
  }

  private onReadable(): void {
    if (this.wanting) this.pull();
  }

  private onEnd(): void {
    this.detach();
    this.push(null);
  }

  private onError(err: Error): void {
    this.destroy(err);
  }

  private detach(): void {
    this.src.off('readable', this.onReadable);
    this.src.off('end', this.onEnd);
    this.src.off('error', this.onError);
  }
}

function ignore(): void { /* see the constructor */ }
