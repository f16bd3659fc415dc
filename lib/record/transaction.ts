// The transaction record as its readers see it (docs/pipeline.md, "The transaction record"):
// the fields the stages fill and finish closes. The pipeline's TransactionRecord implements it;
// the record sinks (the access and origin logs) read it through this shape. It lives below both,
// so the logs read records without importing the pipeline that writes them.
import type { IncomingMessage, OutgoingHttpHeader, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { CacheResult } from '../cache/policy/results.js';
import type { OriginTrace } from '../origin/index.js';

export type Protocol = 'http' | 'https' | 'http2';

/** A connection's four-tuple (IPv4-mapped IPv6 written as IPv4) and its TLS version. */
export interface Connection {
  readonly clientAddress: string;
  readonly clientPort: number;
  readonly serverAddress: string;
  readonly serverPort: number;
  /** The TLS version as `sc-resinfo` writes it (`TLS1.3`, `TLS1.2` ...); undefined: no TLS. */
  readonly tls: string | undefined;
}

/** What a reader needs of the serving virtual host (the pipeline's HostRuntime has it all). */
interface RecordHost {
  /** `x-vhost`. */
  readonly name: string;
  /** Whose logs the lines go to: a facade's name when it differs from the serving host. */
  readonly logName: string;
}

/** One client transaction's record; final once finish has run. */
export interface RecordFields {
  /** The live request and response: the logs read fields of them. */
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  /** The serving virtual host; undefined when none matched (404, 400 ...). */
  readonly host: RecordHost | undefined;
  /** Node-unique (document 3 `session-id`). */
  readonly sessionId: number;
  /** `x-ctx-id`: the UUID of the request chain. */
  readonly ctxId: string;
  readonly method: string;
  /** The request target as received. */
  readonly urlReceived: string;
  /** Path plus query as the cache and the origin see it (after the target form and rewrites). */
  readonly url: string;
  /** The URL the access log shows (cs-uri-stem, cs-uri-query). */
  readonly loggedUrl: string;
  readonly httpVersion: string;
  readonly protocol: Protocol;
  readonly connection: Connection;
  readonly clientAddress: string;
  readonly clientPort: number;
  readonly serverAddress: string;
  readonly serverPort: number;
  /** Arrived from a sibling worker (hash balance): counted and logged there. */
  readonly fromSibling: boolean;
  /** Handed to this sibling worker index (hash balance), -1 when served here. */
  readonly handedTo: number;
  /** Wall-clock ms at receive. */
  readonly startedAt: number;
  /** ms from receive to the status line (-1: no answer started) and to the end. */
  readonly firstByteMs: number;
  readonly totalMs: number;
  /** The status sent; 0 when no byte of an answer went out. */
  readonly status: number;
  readonly requestHeadBytes: number;
  readonly requestBodyBytes: number;
  readonly responseHeadBytes: number;
  readonly responseBodyBytes: number;
  /** The fields the answering stage gave writeHead (see TransactionRecord.responseFields). */
  readonly responseFields: OutgoingHttpHeaders | OutgoingHttpHeader[] | undefined;
  readonly cacheResult: CacheResult | undefined;
  /** The whole answer went out (`x-transaction-status` c, else x). */
  readonly completed: boolean;
  /** The origin exchange this transaction started, if any. */
  readonly origin: OriginTrace | undefined;
  /** 0 not bypassed; 1 `Bypass`, 2 `Bypass/instant` (a bypass rule); 3 a POST under bypass.postMethod. */
  readonly bypass: 0 | 1 | 2 | 3;
  /** URL rewrites applied (URLRewrite). */
  readonly rewrites: number;
  /** Access control: 0 not checked, 1 let through, 2 denied or redirected (ServiceAccess). */
  readonly access: 0 | 1 | 2;
  /** The hosts the fallbacks routed the request to (`x-fallback`, `%L`); undefined when none. */
  readonly fallback: { readonly hosts: readonly string[] } | undefined;
  /** x-hook / %F: '' the host has no hook, 'y' the hook was called, 'n' matchingList left it out. */
  readonly hookLinked: '' | 'y' | 'n';
  /** The hook's answer as received, for `%{...}N` of the custom access log. */
  readonly hook: { readonly fields: Record<string, unknown> } | undefined;
}
