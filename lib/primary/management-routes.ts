// The management API of the node: the route groups the primary adds to it, each with the
// service it needs.
import { invalidationRoutes } from '../manager/routes/invalidation.js';
import type { Route } from '../manager/router.js';
import { ok } from '../manager/envelope.js';
import type { SettingLifecycle } from '../lifecycle/index.js';
import type { LicenseService } from '../license/service.js';
import { asyncRoutes } from '../manager/routes/async.js';
import { getRoutes, type DiscoverEntry } from '../manager/routes/get.js';
import { licenseRoutes } from '../manager/routes/license.js';
import { settingRoutes } from '../manager/routes/setting.js';
import { serviceRoutes, type ServiceControl } from '../manager/routes/service.js';
import { AsyncInvalidationQueue } from './async-queue.js';
import type { PrectrlFeed } from './prectrl-feed.js';
import type { InvalidationService } from './invalidation-service.js';
import type { WorkerBridge } from './rt-bridge.js';
import type { Setting } from '../setting/types.js';
import type { RecognizedInvalidation } from '../manager/types.js';
import { ManagementApi } from '../manager/index.js';
import { statisticsRoutes } from '../manager/routes/statistics.js';
import { graphRoutes } from '../manager/routes/graph.js';
import type { StatsService } from '../stats/service.js';
import type { GraphService } from '../graph/service.js';
import { PRODUCT_VERSION } from '../version.js';

export { PRODUCT_VERSION };

export interface PrimaryServices {
  bridge: WorkerBridge;
  current(): Setting;
  lifecycle: SettingLifecycle;
  license: LicenseService;
  /** Nodes heard by discovery. */
  discover(): DiscoverEntry[];
  /** Each invalidation call the API accepted, before it runs (fleet propagation and bus). */
  recognized?(call: RecognizedInvalidation): void;
  /** The node State of the statistics (Healthy, Inactive, Emergency). */
  state?(): string;
  /** Restart, stop, install, encryptpassword. */
  service: ServiceControl;
  /** The node's invalidation service, shared with central management's purge feed. */
  invalidation: InvalidationService;
  /** `/monitoring/status` (status-report.ts). */
  status(): Record<string, unknown>;
  /** Pre-cache control on its way to the workers (the asynchronous queue's changes). */
  prectrl: PrectrlFeed;
}

/** `GET /monitoring/status`: what `svc status` prints (ours; gated like the other /monitoring queries). */
function statusRoute(p: PrimaryServices): Route {
  return { method: 'GET', path: '/monitoring/status', name: 'status', group: 'query', handler: async (_req, ctx) => ok(ctx.version, 'status', 'query', p.status()) };
}

/** The management API with every route group, the statistics documents and `/graph` included. */
export function managementApiOf(p: PrimaryServices & { stats: StatsService; graphs: GraphService }): ManagementApi {
  return new ManagementApi({
    getSetting: p.current, version: PRODUCT_VERSION, rt: p.bridge,
    extraRoutes: managementRoutes(p).concat(statisticsRoutes(p.stats.source), graphRoutes(p.graphs)),
  });
}

function managementRoutes(p: PrimaryServices): Route[] {
  const invalidation = p.invalidation;
  if (p.recognized !== undefined) invalidation.recognized = (call) => p.recognized!(call);
  const queue = new AsyncInvalidationQueue(invalidation, () => {
    const api = p.current().env.management.api;
    return { max: api.asyncQueueMax, intervalMs: api.asyncInterval };
  }, p.prectrl);
  const query = {
    running: () => p.lifecycle.running(),
    artifact: () => p.lifecycle.artifact(),
    discover: () => p.discover(),
    license: () => p.license.current(),
    servedTls: () => p.bridge.callAll('tls-status', {}),
  };
  return [
    ...invalidationRoutes(invalidation), ...asyncRoutes(queue, invalidation), ...settingRoutes(p.lifecycle),
    ...getRoutes(query), ...serviceRoutes(p.service), statusRoute(p), ...licenseRoutes(p.license, p.state === undefined ? undefined : () => p.state!()),
  ];
}
