// Builds the primary's statistics (StatsService: the workers' counters summed, system figures,
// the node State, the collector) and its graph history (GraphService, fed every second), from
// what the primary knows, as fleet/wiring.ts builds its Fleet: primary.ts keeps the order of the
// start, not how each service is wired.
import path from 'node:path';
import { GraphService } from '../graph/service.js';
import type { LicenseService } from '../license/service.js';
import { systemLog } from '../log/system-log.js';
import { resolvePath } from '../setting/resolve.js';
import { StatsService, type StatsServiceDeps } from '../stats/service.js';
import { PRODUCT_VERSION } from '../version.js';

export interface StatisticsWiring extends Pick<StatsServiceDeps, 'setting' | 'processes' | 'crashLooping' | 'managementAccess' | 'bus'> {
  license(): LicenseService;
}

export function statisticsOf(w: StatisticsWiring): { stats: StatsService; graphs: GraphService } {
  const stats = new StatsService({
    bus: w.bus,
    setting: w.setting, version: PRODUCT_VERSION,
    processes: w.processes,
    disks: () => w.setting().env.cache.disks.map((d) => resolvePath(w.setting(), d.path)),
    licenseState: () => w.license().state(),
    licenseStatus: () => w.license().current().Status,
    crashLooping: w.crashLooping,
    managementAccess: w.managementAccess,
    indexPath: () => resolvePath(w.setting(), w.setting().env.cache.indexPath),
  });
  const graphs = new GraphService({
    file: path.join(resolvePath(w.setting(), 'state'), 'graph-history.sqlite'), source: stats.source,
    warn: (why) => systemLog.warn(why),
  });
  stats.onSecond(() => graphs.second());
  return { stats, graphs };
}
