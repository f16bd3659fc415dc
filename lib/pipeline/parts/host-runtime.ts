// A virtual host as the worker runs it: its resolved setting plus the live objects built from it
// (the origin client). Built once per setting load, never per request.
import { tagFieldsOf } from '../../cache/tags.js';
import type { CachePolicyOptions } from '../../cache/policy/index.js';
import { OriginSet } from '../../origin/index.js';
import type { ResolvedHost } from '../../setting/types.js';
import { uploadLimits } from './upload.js';
import { workerCounters } from './counters.js';
import { directoryStatsOf } from './directory-stats.js';
import { hostLogsOf } from '../../log/host-logs.js';
import { reportError } from '../../log/global/report.js';
import type { DnsRecord } from '../../origin/dns.js';
import type { ProbeRecord } from '../../origin/index.js';
import { systemLog } from '../../log/system-log.js';
import { compileNetwork } from '../../network/rules.js';
import { compileFallbacks } from '../../network/fallbacks.js';
import { compileHostRules } from '../../rules/host-rules.js';
import type { CountryLookup } from '../../rules/conditions.js';
import { compileHook } from '../../hook/rule.js';
import { compressionOf } from './encode.js';
import { cacheStatusRuntime } from './cache-status.js';
import type { HostRuntime } from './shapes.js';

/** The shape lives in a leaf (shapes.ts) the transaction record names; its readers import it here too. */
export type { HostRuntime } from './shapes.js';

/** This host's runtime as a facade of `target` (mode.facadeHost): its statistics and logs kept. */
export function facadeOf(own: HostRuntime, target: HostRuntime | undefined): HostRuntime | undefined {
  return target === undefined ? undefined : {
    ...target, logName: own.name, counterSlot: own.counterSlot, logs: own.logs, directoryStats: own.directoryStats, facade: undefined,
  };
}


function cachePolicyOf(host: ResolvedHost): CachePolicyOptions {
  const c = host.functions.network.cache;
  return {
    defaultTtl: c.ttl.default, negativeTtl: c.ttl.negative, negativeServerErrors: c.ttl.negativeServerErrors, heuristicFraction: c.ttl.heuristicFraction,
    heuristicMax: c.ttl.heuristicMax, keep: c.ttl.keep, honourNoCache: c.honourNoCache, honourPrivate: c.honourPrivate,
    storeSetCookie: c.storeSetCookie,
  };
}

/**
 * `onDns` hears every resolution of the host's domain origins (the dns log), `onProbe` every
 * recovery probe of its Inactive addresses (the origin log).
 */
export function buildHostRuntime(
  host: ResolvedHost, geo: CountryLookup | undefined, onDns?: (vhost: string, r: DnsRecord) => void, onProbe?: (vhost: string, p: ProbeRecord) => void,
): HostRuntime {
  const backEnd = host.functions.network.http.backEnd;
  const origin = new OriginSet({
    vhost: host.name,
    ...(onDns === undefined ? {} : { onDns: (r: DnsRecord) => onDns(host.name, r) }),
    ...(onProbe === undefined ? {} : { onProbe: (p: ProbeRecord) => onProbe(host.name, p) }),
    protocol: host.origin.protocol,
    address: host.origin.address,
    address2: host.origin.address2,
    connectTimeoutMs: backEnd.session.connectTimeout * 1000,
    receiveTimeoutMs: backEnd.session.receiveTimeout * 1000,
    keepAliveTimeoutMs: backEnd.session.reuseTimeout * 1000,
    maxConnections: backEnd.session.maxConnections,
    failCount: backEnd.health.failCount,
    recoveryIntervalMs: backEnd.health.recoveryInterval * 1000,
    inactiveTtlMs: backEnd.health.inactiveTtl * 1000,
  });
  return {
    name: host.name,
    logName: host.name,
    enable: host.enable,
    aliases: host.aliases,
    listen: host.listen,
    forwardedFor: backEnd.forwardedFor,
    origin,
    setting: host,
    counterSlot: workerCounters.slotOf(host.name),
    // Validated with the setting (semantic.ts): a hook that does not compile never reaches a worker.
    hook: compileHook(host.functions.hook, 'functions.hook', geo),
    ...cacheFields(host, geo),
  };
}

/** The members of a HostRuntime that follow the host setting without a new origin client. */
export function cacheFields(host: ResolvedHost, geo: CountryLookup | undefined):
  Pick<HostRuntime, 'cachePolicy' | 'cacheStatus' | 'tags' | 'volatile' | 'nonVolatileSize' | 'pieces' | 'connectTimeoutMs' | 'upload' | 'logs' | 'rules' | 'net' | 'fallbacks' | 'directoryStats' | 'compression' | 'useOriginEncoding'> {
  return {
    directoryStats: directoryStatsOf(host.functions.statistics.directory),
    rules: compileHostRules(host, geo),
    // Validated with the setting: a rule that does not compile never reaches a worker.
    net: compileNetwork(host.functions.network, 'functions', geo),
    fallbacks: compileFallbacks(host.fallbacks, 'hosting'),
    logs: hostLogsOf(host, (message) => {
      systemLog.warn(message);
      reportError({ code: '4004', vhost: host.name, detail: message });
    }),
    upload: uploadLimits(host.functions.network.http.frontEnd),
    cachePolicy: cachePolicyOf(host),
    tags: tagFieldsOf(host.functions.network.cache.tags),
    cacheStatus: cacheStatusRuntime(host),
    volatile: host.mode.volatile,
    nonVolatileSize: host.mode.nonVolatileSize,
    pieces: piecesOf(host.functions.network.cache),
    connectTimeoutMs: host.functions.network.http.backEnd.session.connectTimeout * 1000,
    compression: compressionOf(host.functions.compression),
    useOriginEncoding: host.functions.network.cache.compression.useOriginEncoding,
  };
}

function piecesOf(c: ResolvedHost['functions']['network']['cache']): HostRuntime['pieces'] {
  return c.limitMaxRange === 0 ? undefined : { limitMaxRange: c.limitMaxRange, partSize: c.partSize };
}

/** Whether a new setting of a host can keep the running origin client (same origin fields). */
export function sameOrigin(a: ResolvedHost, b: ResolvedHost): boolean {
  return JSON.stringify(originFields(a)) === JSON.stringify(originFields(b));
}

/** What the origin client is built from (backEnd.modify is not: it follows the setting anyway). */
function originFields(h: ResolvedHost): unknown[] {
  const be = h.functions.network.http.backEnd;
  // The hook's client lives with the origin client: a changed hook builds both anew.
  return [h.origin, be.session, be.health, be.forwardedFor, h.functions.hook];
}
