// The cluster statistics collector (env.management.cluster.stats): a plain HTTP listener in the
// primary, loopback by default, that answers this node's statistics without the management
// ACL (it is the scrape point). Paths: GET /monitoring/realtime, /monitoring/average, /metrics;
// anything else 404, another method 405.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { badStatisticsRequest, metricsReply, statisticsReply, type StatisticsSource, type StatsReply } from './documents.js';

export class StatsCollector {
  private server: http.Server | undefined;

  constructor(private readonly src: StatisticsSource) {}

  /** Listens on host:port; rejects when the address cannot be bound. */
  start(host: string | null, port: number): Promise<void> {
    const server = http.createServer((req, res) => this.answer(req, res));
    // A scraper that connects and says nothing must not hold a socket for ever.
    server.requestTimeout = 10_000;
    server.headersTimeout = 10_000;
    this.server = server;
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host ?? undefined, () => { server.off('error', reject); resolve(); });
    });
  }

  get port(): number | undefined {
    return (this.server?.address() as AddressInfo | null)?.port;
  }

  private answer(req: http.IncomingMessage, res: http.ServerResponse): void {
    const url = new URL(req.url ?? '/', 'http://collector');
    const path = url.pathname.length > 1 && url.pathname.endsWith('/') ? url.pathname.slice(0, -1) : url.pathname;
    let reply: StatsReply;
    if (path !== '/monitoring/realtime' && path !== '/monitoring/average' && path !== '/metrics') {
      reply = { status: 404, contentType: 'text/plain; charset=utf-8', body: 'Not Found: the collector answers /monitoring/realtime, /monitoring/average and /metrics\n' };
    } else if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('allow', 'GET, HEAD');
      reply = { status: 405, contentType: 'text/plain; charset=utf-8', body: 'Method Not Allowed\n' };
    } else if (path === '/metrics') {
      reply = metricsReply(this.src);
    } else {
      const r = statisticsReply(this.src, path === '/monitoring/average', url.searchParams);
      reply = 'error' in r ? badStatisticsRequest(r.error) : r;
    }
    res.writeHead(reply.status, { 'content-type': reply.contentType, 'content-length': Buffer.byteLength(reply.body) });
    res.end(req.method === 'HEAD' ? undefined : reply.body);
  }

  close(): Promise<void> {
    const s = this.server;
    if (s === undefined) return Promise.resolve();
    s.closeAllConnections();
    return new Promise((r) => s.close(() => r()));
  }
}
