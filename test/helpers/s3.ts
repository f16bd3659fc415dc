// A real S3-compatible server on loopback for the tests (s3rver: it checks the access key of a
// SigV4 request, not the signature; signing is tested against AWS's published vectors), and a
// small signed client to read back what it received.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { AwsClient } from 'aws4fetch';
import S3rver from 's3rver';

/** s3rver's built-in key pair. */
export const S3_KEYS = { accessKey: 'S3RVER', secretKey: 'S3RVER' };

export interface TestS3 {
  url: string;
  list(bucket: string): Promise<string[]>;
  get(bucket: string, key: string): Promise<Buffer>;
  stop(): Promise<void>;
}

export async function startS3(buckets: string[]): Promise<TestS3> {
  const directory = await fs.mkdtemp(path.join(os.tmpdir(), 's3rver-'));
  const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory, configureBuckets: buckets.map((name) => ({ name })) });
  const { port } = await server.run();
  const url = `http://127.0.0.1:${port}`;
  const client = new AwsClient({ accessKeyId: S3_KEYS.accessKey, secretAccessKey: S3_KEYS.secretKey, service: 's3', region: 'us-east-1' });
  return {
    url,
    async list(bucket) {
      const r = await client.fetch(`${url}/${bucket}?list-type=2`);
      const xml = await r.text();
      return [...xml.matchAll(/<Key>([^<]*)<\/Key>/g)].map((m) => m[1]!).sort();
    },
    async get(bucket, key) {
      const r = await client.fetch(`${url}/${bucket}/${key.split('/').map(encodeURIComponent).join('/')}`);
      if (r.status !== 200) throw new Error(`GET ${key}: ${r.status}`);
      return Buffer.from(await r.arrayBuffer());
    },
    async stop() {
      await server.close();
      await fs.rm(directory, { recursive: true, force: true });
    },
  };
}
