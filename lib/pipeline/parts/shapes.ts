// The shapes the transaction record names and every step reads: the host runtime and the parts
// of it built by other modules (upload limits, compression, Cache-Status, directory statistics),
// and the Cache-Status note. A leaf: it imports nothing of lib/pipeline, so the record
// (transaction.ts) names them without a circle back through the modules that read the record
// (docs/pipeline.md, "Layout and import direction"). The builders stay with their modules.
import type { TagFields } from '../../cache/tags.js';
import type { CachePolicyOptions } from '../../cache/policy/index.js';
import type { CacheStatusFwd } from '../../cache/policy/cache-status.js';
import type { Coding, CompressionRules } from '../../cache/policy/encoding.js';
import type { Encoder } from '../../cache/encoder.js';
import type { OriginSet } from '../../origin/index.js';
import type { ResolvedHost } from '../../setting/types.js';
import type { Listen, RoutableHost } from '../../routing/vhost-table.js';
import type { HostLogs } from '../../log/host-logs.js';
import type { NetworkRules } from '../../network/rules.js';
import type { FallbackRule } from '../../network/fallbacks.js';
import type { HostRules } from '../../rules/host-rules.js';
import type { HookRule } from '../../hook/rule.js';
import type { PagedeskRuntime } from '../../pagedesk/producer.js';

export interface HostRuntime extends RoutableHost {
  name: string;
  /** The host whose logs and x-vhost the transactions show: `name`, or the facade's name. */
  logName: string;
  enable: boolean;
  aliases: string[];
  listen: Listen | null;
  forwardedFor: boolean;
  origin: OriginSet;
  setting: ResolvedHost;
  /** The operator's caching knobs of this host (functions.network.cache). */
  cachePolicy: CachePolicyOptions;
  /** Cache-Status on the host's answers (functions.network.cache.cacheStatus); undefined when off. */
  cacheStatus: CacheStatusRuntime | undefined;
  volatile: boolean;
  nonVolatileSize: number;
  /**
   * Partial storage (functions.network.cache.limitMaxRange, partSize): Range misses and objects
   * above limitMaxRange are fetched and stored in pieces. Undefined when limitMaxRange is 0.
   */
  pieces: { limitMaxRange: number; partSize: number } | undefined;
  /** Cache tags (functions.network.cache.tags); undefined when off. */
  tags?: TagFields | undefined;
  /** A purged copy restored after an origin failure is refreshed again after this long. */
  connectTimeoutMs: number;
  /** How request bodies are taken in before they go on (bufferBodyUpTo, bodyMinRate). */
  upload: UploadLimits;
  /** This host's row in the worker's counters (kept by name across reloads). */
  counterSlot: number;
  /** What the host logs (access, origin); undefined when it logs nothing. */
  logs: HostLogs | undefined;
  /** Directory statistics (functions.statistics.directory); undefined when off. */
  directoryStats: DirectoryStats | undefined;
  /** Bypass, header edits and cache key rules; undefined when the host has none (the usual case). */
  net: NetworkRules | undefined;
  /** hosting[].fallbacks compiled; undefined when off or empty. */
  fallbacks: FallbackRule[] | undefined;
  /** urlRewrites and access control compiled; undefined when the host has neither. */
  rules: HostRules | undefined;
  /** functions.hook compiled, with its client; undefined when the host has no hook (the usual case). */
  hook: HookRule | undefined;
  /**
   * mode.facadeHost: the named host's runtime with this host's counter row and logs, which
   * receive serves in its place. Set by the worker once every host of a load is built.
   */
  facade?: HostRuntime | undefined;
  /**
   * functions.network.cache.compression.useOriginEncoding: the origin's coding is kept (true), or
   * the origin is asked for identity and its answer stored once for every Accept-Encoding (false).
   */
  useOriginEncoding: boolean;
  /** functions.compression compiled, with the host's compression queue; undefined when off. */
  compression: HostCompression | undefined;
  /** functions.contents.pagedesk when enabled (set by the worker, which owns the edit threads). */
  pagedesk?: PagedeskRuntime | undefined;
}

/** Per host, from functions.network.http.frontEnd (upload.ts); built with the host, not per request. */
export interface UploadLimits {
  /** Bodies up to this many bytes are read whole first; of a larger one, this much. 0: none. */
  bufferUpTo: number;
  /** Bytes a period must bring while we wait for the body; 0: no minimum. */
  minBytesPerPeriod: number;
  periodMs: number;
}

/** functions.compression of a host as its runtime holds it; undefined when off. */
export interface HostCompression {
  rules: CompressionRules;
  encoder: Encoder;
  maxWaitMs: number;
  /** The coding chosen for each Accept-Encoding spelling seen (clients send a handful). */
  choices: Map<string, Coding | 'identity'>;
}

/** functions.network.cache.cacheStatus as a worker applies it; undefined when off. */
export interface CacheStatusRuntime {
  /** The member's name as written (a token, or a quoted string). */
  item: string;
  /** Add `key=` (the cache key) to every member. */
  key: boolean;
}

/** What the stages learned about the request's way through the cache (undefined members: not known). */
export interface CacheStatusNote {
  fwd?: CacheStatusFwd;
  fwdStatus?: number;
  stored?: boolean;
  collapsed?: boolean;
  ttl?: number;
  key?: string;
  /** The answer is another worker's (hash hand-off): its owner wrote our member already. */
  relayed?: boolean;
}

/** functions.statistics.directory of a host (directory-stats.ts); undefined when off. */
export interface DirectoryStats {
  depth: number;
  accum: boolean;
  max: number;
  /** Directory -> counter row, filled as directories are met (at most `max`). */
  slots: Map<string, number>;
}
