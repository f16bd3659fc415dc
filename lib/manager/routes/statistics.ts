// `/monitoring/realtime`, `/monitoring/average` and `/metrics` on the management port (the same
// answers as the statistics collector's, behind the ACL: enableMonitoring, enableMetric).
import { ApiError, HTTP } from '../envelope.js';
import type { Route } from '../router.js';
import { metricsReply, statisticsReply, type StatisticsSource } from '../../stats/documents.js';
import type { ApiReply } from '../types.js';

export function statisticsRoutes(src: StatisticsSource): Route[] {
  const monitoring = (average: boolean) => async (req: { query: URLSearchParams }): Promise<ApiReply> => {
    const r = statisticsReply(src, average, req.query);
    if ('error' in r) throw new ApiError(HTTP.badRequest, r.error);
    return { status: r.status, headers: { 'content-type': r.contentType }, body: r.body };
  };
  return [
    { method: 'GET', path: '/monitoring/realtime', name: 'realtime', group: 'query', handler: monitoring(false) },
    { method: 'GET', path: '/monitoring/average', name: 'average', group: 'query', handler: monitoring(true) },
    {
      method: 'GET', path: '/metrics', name: 'metrics', group: 'query',
      handler: async () => {
        const r = metricsReply(src);
        return { status: r.status, headers: { 'content-type': r.contentType }, body: r.body };
      },
    },
  ];
}
