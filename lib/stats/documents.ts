// The answers of the statistics paths, shared by the management API (lib/manager/routes/
// statistics.ts) and the cluster statistics collector (lib/stats/collector.ts): the query
// parameters of document 1 (`type`, `min`) and the content of each form.
import { hostDocument, type Interval, type ViewSource } from './realtime-view.js';
import { metricsText, METRICS_CONTENT_TYPE } from './prometheus.js';
import { statisticsXml } from './xml.js';

export interface StatsReply {
  status: number;
  contentType: string;
  body: string;
}

/** What the statistics paths read: the view source and the metrics' group label. */
export interface StatisticsSource extends ViewSource {
  /** meta.group when meta.labelGroupToMetrics is true and the group is set, else undefined. */
  metricsGroup(): string | undefined;
}

const bad = (reason: string): StatsReply => ({ status: 400, contentType: 'text/plain; charset=utf-8', body: `${reason}\n` });

/**
 * `/monitoring/realtime` (`average` false) or `/monitoring/average`: `type` JSON (default) or
 * XML, any case; `min` 1 or 5 (default 5), only for average. Anything else is a 400.
 */
export function statisticsReply(src: StatisticsSource, average: boolean, query: URLSearchParams): StatsReply | { error: string } {
  const type = (query.get('type') ?? 'JSON').toUpperCase();
  if (type !== 'JSON' && type !== 'XML') return { error: `type must be JSON or XML, not "${query.get('type')}"` };
  let interval: Interval = 'realtime';
  if (average) {
    const min = query.get('min') ?? '5';
    if (min !== '1' && min !== '5') return { error: `min must be 1 or 5, not "${min}"` };
    interval = min === '1' ? 'min1' : 'min5';
  } else if (query.has('min')) {
    return { error: 'min applies to /monitoring/average only' };
  }
  const doc = hostDocument(src, interval);
  if (type === 'XML') return { status: 200, contentType: 'application/xml; charset=utf-8', body: statisticsXml(doc) };
  return { status: 200, contentType: 'application/json; charset=utf-8', body: JSON.stringify(doc) };
}

export function metricsReply(src: StatisticsSource): StatsReply {
  return { status: 200, contentType: METRICS_CONTENT_TYPE, body: metricsText(src, src.metricsGroup()) };
}

export { bad as badStatisticsRequest };
