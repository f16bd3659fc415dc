// A scripted central management server for the black-box tests: feeds the test sets (answered
// 304 when the node's If-Modified-Since matches their Last-Modified), packages, and the
// feedback and heartbeat bodies it received.
import { TestOrigin, type SeenRequest } from '../../helpers/origin.js';
import { S3_KEYS } from '../../helpers/s3.js';
import { startServer, type RunningServer } from '../../helpers/server.js';

/**
 * The real server with `env.management.server` on (`server`: its fields besides `enable`) and its
 * logs under `svclog`, as every central-management test starts it.
 */
export function startCentralNode(hosting: unknown[], server: Record<string, unknown>): Promise<RunningServer> {
  return startServer(hosting, { extra: { env: { log: { meta: { dir: 'svclog' } }, management: { server: { enable: true, ...server } } } } });
}

/** A `connection` entry named `s3` for the bucket `bucket` of a local S3-compatible server. */
export function s3Connection(endpoint: string, bucket: string): Record<string, unknown> {
  return { name: 's3', type: 'httpCloudASig4', info: { accessKeyId: S3_KEYS.accessKey, secretAccessKey: S3_KEYS.secretKey, region: 'us-east-1', bucket, endpoint } };
}

interface Published { body: string | Buffer; lastModified: string; type?: string }

export class CentralServer {
  readonly origin = new TestOrigin();
  private readonly feeds = new Map<string, Published>();
  readonly received = new Map<string, Record<string, any>[]>();

  async start(): Promise<this> {
    await this.origin.start();
    this.origin.otherwise((req, res) => {
      const path = req.url.split('?')[0]!;
      if (req.method === 'POST') {
        const list = this.received.get(path) ?? [];
        list.push(JSON.parse(req.body.toString('utf8')) as Record<string, any>);
        this.received.set(path, list);
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{}');
        return;
      }
      const feed = this.feeds.get(path);
      if (feed === undefined) { res.writeHead(204); res.end(); return; }
      if (req.headers['if-modified-since'] === feed.lastModified) { res.writeHead(304); res.end(); return; }
      const body = Buffer.from(feed.body);
      res.writeHead(200, { 'content-type': feed.type ?? 'application/json', 'last-modified': feed.lastModified, 'content-length': body.length });
      res.end(body);
    });
    return this;
  }

  url(path: string): string {
    return `http://127.0.0.1:${this.origin.port}${path}`;
  }

  publish(path: string, p: Published): void {
    this.feeds.set(path, p);
  }

  posts(path: string): Record<string, any>[] {
    return this.received.get(path) ?? [];
  }

  gets(path: string): SeenRequest[] {
    return this.origin.seen.filter((s) => s.method === 'GET' && s.url.split('?')[0] === path);
  }

  stop(): Promise<void> {
    return this.origin.stop();
  }
}
