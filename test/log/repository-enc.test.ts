// `enc:` credentials (made by /command/encryptpassword under the node's license) in an S3-type
// log repository, in-process: the upload is signed with the decrypted secret and reaches the
// store. s3rver checks the access key only, so a second stand-in store checks the signature: it
// signs the request it received again with the plain secret (aws4fetch, the signer of
// test/log/repository-sigv4.test.ts, checked there against AWS's published vectors) and
// compares the Authorization fields.
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { AwsV4Signer } from 'aws4fetch';
import { signLicense } from '../../lib/license/license.js';
import { encryptSecret, secretKeyOf } from '../../lib/license/secret-box.js';
import { startS3, S3_KEYS } from '../helpers/s3.js';
import { shipFixture } from './fixtures/ship.js';

const license = signLicense({ Name: 'ACME', Type: 'Enterprise', SerialNumber: 'SN-1', AllowedFeatures: 'ALL', NotBefore: '20260101000000Z', NotAfter: '20990101000000Z' },
  crypto.generateKeyPairSync('ed25519').privateKey);
const key = secretKeyOf(license);
const s3 = await startS3(['logs']);
t.teardown(() => s3.stop());

/** Authorization of the request as a signer given `secret` would write it, from what was received. */
async function resigned(req: http.IncomingMessage, port: number, secret: string, accessKeyId: string): Promise<string> {
  const h = req.headers;
  const signer = new AwsV4Signer({
    method: 'PUT', url: `http://127.0.0.1:${port}${req.url}`, service: 's3', region: 'us-east-1', datetime: h['x-amz-date'] as string,
    headers: { 'content-type': h['content-type'] as string, 'x-amz-content-sha256': h['x-amz-content-sha256'] as string },
    accessKeyId, secretAccessKey: secret,
  });
  return (await signer.sign()).headers.get('authorization')!;
}

t.test('an enc: access key and secret key are decrypted for the upload: the object arrives and is signed with the plain secret', async (t) => {
  const f = shipFixture(t, { secretKey: () => key });
  f.configure({ type: 'cloudA-objstore', path: 'enc/{timestamp}.log', endpoint: { bucket: 'logs', region: 'us-east-1', domain: s3.url,
    accessKey: encryptSecret(key, S3_KEYS.accessKey), secretKey: encryptSecret(key, S3_KEYS.secretKey) } });
  await f.roll(['sealed']);
  await f.scheduler.fire('r');
  t.equal(f.attempts()[0]?.error, null, 'the upload succeeded');
  const keys = (await s3.list('logs')).filter((k) => k.startsWith('enc/'));
  t.equal(keys.length, 1);
  t.equal((await s3.get('logs', keys[0]!)).toString(), 'sealed\n', 'the object arrived');

  const plain = { accessKeyId: 'AKIDEXAMPLE', secret: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' };
  const seen: Array<{ given: string; expected: string }> = [];
  const store = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => void resigned(req, (store.address() as AddressInfo).port, plain.secret, plain.accessKeyId).then((expected) => {
      seen.push({ given: req.headers.authorization ?? '', expected });
      res.end();
    }));
  });
  await new Promise<void>((r) => store.listen(0, '127.0.0.1', r));
  t.teardown(() => store.close());
  f.configure({ type: 'cloudA-objstore', path: 'signed/{timestamp}.log', endpoint: { bucket: 'logs', region: 'us-east-1', domain: `http://127.0.0.1:${(store.address() as AddressInfo).port}`,
    accessKey: encryptSecret(key, plain.accessKeyId), secretKey: encryptSecret(key, plain.secret) } });
  await f.roll(['signed']);
  await f.scheduler.fire('r');
  t.equal(seen.length, 1, 'one PUT');
  t.match(seen[0]!.given, /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\//, 'the plain access key');
  t.equal(seen[0]!.given, seen[0]!.expected, 'the signature made with the plain secret');
});

t.test('an enc: secret on a node without a license fails the upload and says why', async (t) => {
  const f = shipFixture(t, { secretKey: () => undefined, retryMs: 60_000 });
  f.configure({ type: 'cloudA-objstore', path: 'nolicense/{timestamp}.log', endpoint: { bucket: 'logs', region: 'us-east-1', domain: s3.url,
    accessKey: S3_KEYS.accessKey, secretKey: encryptSecret(key, S3_KEYS.secretKey) } });
  await f.roll(['kept']);
  await f.scheduler.fire('r');
  t.match(f.attempts()[0]?.error, /needs a valid license/);
  t.same((await s3.list('logs')).filter((k) => k.startsWith('nolicense/')), []);
});
