// The failover walk of one origin request over the endpoints of its set: which endpoint to try
// next, and what a failed attempt means for the request and for the endpoint's health. Shared by
// OriginSet.request() (promise, Readable body) and OriginSet.dispatch() (callbacks).
import type { OriginAddressParts } from './address.js';
import { classify, Failure, OriginError, toOriginError } from './errors.js';
import type { Endpoint } from './health.js';
import type { OriginRequest } from './types.js';

/** What the walk reads of a configured address. */
interface AddressView {
  readonly parts: OriginAddressParts;
  readonly hostHeader: string;
  readonly secondary: boolean;
  /** Domain addresses: when the current DNS answer expires. */
  readonly expiresAt: number;
}

export interface View {
  list: Endpoint[];
  owners: AddressView[];
  /** next[i]: index of the first Active endpoint after i, or -1. */
  next: Int32Array;
  /** First Active endpoint, or -1 when every endpoint is Inactive (or there is none). */
  first: number;
}

/** The endpoint of one attempt. */
export interface Target { ep: Endpoint; owner: AddressView }

function isIdempotent(method: string): boolean {
  return method === 'GET' || method === 'HEAD' || method === 'OPTIONS' || method === 'PUT' ||
    method === 'DELETE' || method === 'TRACE';
}

/**
 * The walk is its own Target (the endpoint of the current attempt): no object per attempt. A
 * dispatch (dispatch.ts OriginCall) is a walk itself: no second object per request.
 */
export class Walk implements Target {
  ep!: Endpoint;
  owner!: AddressView;
  private i: number;
  /** Everything excluded: try every address in order anyway; the origin may be back already. */
  private readonly walkAll: boolean;
  attempts = 0;
  private last: OriginError | null = null;

  /**
   * inactiveTtlMs: how long a failing domain IP stays Inactive (default: its DNS TTL);
   * noAnswer: the error when no attempt could be made at all.
   */
  constructor(private readonly view: View, protected readonly r: OriginRequest, private readonly inactiveTtlMs: number | undefined,
    private readonly noAnswer: () => OriginError) {
    this.walkAll = view.first < 0;
    this.i = this.walkAll ? 0 : view.first;
  }

  /** The next attempt, with `opts.path` and the request's Host set for it; undefined when none is left. */
  next(opts: { path: string }): Target | undefined {
    const { view, r } = this;
    if (this.i < 0 || this.i >= view.list.length) return undefined;
    const owner = view.owners[this.i]!;
    const prefix = owner.parts.path;
    opts.path = prefix === '' ? r.url : r.url === '*' ? prefix : prefix + r.url;
    r.headers.host = r.hostOverride ?? owner.hostHeader;
    this.attempts++;
    this.ep = view.list[this.i]!;
    this.owner = owner;
    return this;
  }

  /**
   * An attempt failed before any answer: the error to give up with, or null to go on with
   * next(). `pool`: the pool the attempt used; `consumed`: the request body was partly sent.
   */
  failed(t: Target, pool: unknown, err: unknown, consumed: boolean): unknown {
    const { r, view } = this;
    const kind = classify(err);
    if (kind === Failure.Aborted || r.signal?.aborted === true) return err;
    const last = toOriginError(kind, err);
    last.address = t.owner.parts.raw;
    last.ip = t.ep.ip;
    last.attempts = this.attempts;
    this.last = last;
    if (consumed) return last;
    if (kind === Failure.PoolClosed) {
      if (t.ep.pool !== pool && this.attempts <= view.list.length) return null; // reset() swapped it: same endpoint
    } else if (kind !== Failure.Other) {
      // A silent origin counts like an unreachable one; errors of our own side (a broken
      // client upload, a bad header) say nothing about the origin.
      t.ep.failed(t.owner.parts.isIp ? Infinity : this.inactiveTtlMs ?? Math.max(0, t.owner.expiresAt - Date.now()));
    }
    const retry = kind === Failure.Connect || kind === Failure.ConnectTimeout || kind === Failure.PoolClosed ||
      (kind === Failure.Reset && isIdempotent(r.method));
    if (!retry) return last;
    this.i = this.walkAll ? this.i + 1 : view.next[this.i]!;
    return null;
  }

  /** No address is left to try: the error of the last attempt, or why none was made. */
  error(): OriginError {
    return this.last ?? this.noAnswer();
  }
}
