// The primary's graphs: keeps the history (a sample of the realtime statistics every second,
// the round-robin store in <state>/graph-history.sqlite) and answers one graph as a PNG, drawn
// by the render thread. Path parsing and statuses are the route's (lib/manager/routes/graph.ts).
import { hostDocument, type ViewSource } from '../stats/realtime-view.js';
import { GraphHistory } from './history.js';
import { GraphRenderer } from './renderer.js';
import { ALL_HOSTS_SCOPE, NODE_SCOPE, RrdStore } from './rrd.js';
import type { ResourceDef } from './lines.js';
import { GLOBAL_RESOURCES, VHOST_RESOURCES } from './resources.js';
import { GRAPH_TYPES, isGraphType } from './types.js';
import { LINE_COLORS, PEAK_COLOR, type DrawJob } from './draw.js';
import { codedError } from '../errors/codes.js';

export interface GraphServiceDeps {
  file: string;
  /** The statistics the history samples (and the hosts served now). */
  source: ViewSource;
  /** A history dropped (another version's, unreadable), or one that cannot be written. */
  warn(why: string): void;
  now?: () => number;
}

const byName = (list: readonly ResourceDef[]): Map<string, ResourceDef> => new Map(list.map((r) => [r.name, r]));
const GLOBAL = byName(GLOBAL_RESOURCES);
const VHOST = byName(VHOST_RESOURCES);

export class GraphService {
  private readonly history: GraphHistory;
  private readonly renderer = new GraphRenderer();
  private lastWarning = 0;

  constructor(private readonly deps: GraphServiceDeps) {
    this.history = new GraphHistory(RrdStore.open(deps.file, deps.warn), deps.now);
    this.history.retain(deps.source.hosts());
  }

  /**
   * Samples the second just closed (called by the statistics service's clock). A store that
   * cannot be written (disk full) costs the graphs that step, never the primary: it is reported
   * at most once a minute.
   */
  second(): void {
    const src = this.deps.source;
    try {
      this.history.sample({
        host: hostDocument(src, 'realtime').Host as Record<string, unknown>,
        nodeRow: src.stats.node.second,
        hostRow: (name) => src.stats.series(name).second,
      });
    } catch (err) {
      if (Date.now() - this.lastWarning < 60_000) return;
      this.lastWarning = Date.now();
      this.deps.warn(`graph history cannot be written (${(err as Error).message}); its steps are lost meanwhile`);
    }
  }

  /** After a setting change: the history of hosts no longer served is dropped. */
  retain(hosts: string[]): void {
    this.history.retain(hosts);
  }

  /**
   * The PNG of `<resource>_<type>` (`vhost` false: a global resource); `host` names one virtual
   * host of a virtual-host graph, undefined for the sum of all hosts.
   */
  async png(vhost: boolean, name: string, host: string | undefined): Promise<Buffer> {
    const cut = name.lastIndexOf('_');
    const typeName = cut < 0 ? '' : name.slice(cut + 1);
    const resource = (vhost ? VHOST : GLOBAL).get(name.slice(0, cut));
    if (!isGraphType(typeName) || resource === undefined) {
      throw codedError('GRAPH_NOT_FOUND', `${name}.png`, `${vhost ? '/graph/vhost/' : '/graph/'}<resource>_<type>.png with a resource of ${[...(vhost ? VHOST : GLOBAL).keys()].join(', ')} and a type of ${Object.keys(GRAPH_TYPES).join(', ')}`);
    }
    if (host !== undefined && !this.deps.source.hosts().includes(host)) throw codedError('VHOST_NOT_FOUND', host);
    const type = GRAPH_TYPES[typeName];
    const scope = !vhost ? NODE_SCOPE : host ?? ALL_HOSTS_SCOPE;
    const series = this.history.series(scope, resource, type);
    const whose = !vhost ? '' : host === undefined ? ' (all hosts)' : ` (${host})`;
    const job: DrawJob = {
      width: type.width, height: type.height, type: type.name, unit: resource.unit,
      title: type.name === 'dash' ? `${resource.title}${whose}` : `${resource.title}${whose}, last ${type.spanText}`,
      start: series.start, step: series.step,
      lines: resource.lines.map((l, i) => ({ label: l.label, color: LINE_COLORS[i % LINE_COLORS.length]!, values: series.lines[i]! })),
      ...(series.peak === undefined ? {} : { peak: { label: `Peak ${resource.lines[0]!.label}`, color: PEAK_COLOR, values: series.peak } }),
    };
    return this.renderer.render(job);
  }

  async close(): Promise<void> {
    this.history.close();
    await this.renderer.close();
  }
}
