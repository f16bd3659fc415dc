// SigV4 signing against AWS's published examples, values copied from AWS's documentation:
// - the Signature Version 4 test suite (aws-sig-v4-test-suite, credential scope
//   20150830/us-east-1/service): get-vanilla and post-vanilla;
// - the Amazon S3 API reference, "Signature Calculations for the Authorization Header:
//   Transferring Payload in a Single Chunk" (examplebucket, 20130524): the GET Object with a
//   Range header and the PUT Object of "Welcome to Amazon S3.".
// None was derived by running the algorithm here: a mismatch is a signing bug.
import t from 'tap';
import { AwsV4Signer } from 'aws4fetch';
import { signPut } from '../../lib/log/repository/s3.js';

const SUITE = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' };
const S3_DOCS = { accessKeyId: 'AKIAIOSFODNN7EXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY' };
const EMPTY_SHA256 = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';

async function authorization(s: AwsV4Signer): Promise<string> {
  return (await s.sign()).headers.get('authorization')!;
}

t.test('get-vanilla of the SigV4 test suite signs to its published signature', async (t) => {
  const s = new AwsV4Signer({ method: 'GET', url: 'https://example.amazonaws.com/', service: 'service', region: 'us-east-1', datetime: '20150830T123600Z', ...SUITE });
  t.equal(await authorization(s),
    'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, ' +
    'Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31');
});

t.test('post-vanilla of the SigV4 test suite signs to its published signature', async (t) => {
  const s = new AwsV4Signer({ method: 'POST', url: 'https://example.amazonaws.com/', service: 'service', region: 'us-east-1', datetime: '20150830T123600Z', ...SUITE });
  t.equal(await authorization(s),
    'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, ' +
    'Signature=5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b');
});

t.test('the S3 GET Object example with a Range header signs to its published signature', async (t) => {
  const s = new AwsV4Signer({
    method: 'GET', url: 'https://examplebucket.s3.amazonaws.com/test.txt', service: 's3', region: 'us-east-1',
    datetime: '20130524T000000Z', allHeaders: true,
    headers: { range: 'bytes=0-9', 'x-amz-content-sha256': EMPTY_SHA256 }, ...S3_DOCS,
  });
  t.equal(await authorization(s),
    'AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, ' +
    'SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41');
});

t.test('the upload signer signs the S3 PUT Object example to its published signature', async (t) => {
  // The body "Welcome to Amazon S3." hashes to the x-amz-content-sha256 of the example.
  const headers = await signPut('https://examplebucket.s3.amazonaws.com/test$file.text', 'us-east-1', S3_DOCS,
    '44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072', 'text/plain',
    { datetime: '20130524T000000Z', headers: { date: 'Fri, 24 May 2013 00:00:00 GMT', 'x-amz-storage-class': 'REDUCED_REDUNDANCY' } });
  t.equal(headers.authorization,
    'AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, ' +
    'SignedHeaders=date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class, Signature=98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd');
  t.equal(headers['x-amz-date'], '20130524T000000Z');
});

t.test('an instance-role session token is sent and signed', async (t) => {
  const headers = await signPut('https://b.s3.eu-west-1.amazonaws.com/k', 'eu-west-1', { ...S3_DOCS, sessionToken: 'TOKEN' }, EMPTY_SHA256, 'text/plain');
  t.equal(headers['x-amz-security-token'], 'TOKEN');
  t.match(headers.authorization, /SignedHeaders=host;x-amz-content-sha256;x-amz-date;x-amz-security-token,/);
  t.match(headers.authorization, /Credential=AKIAIOSFODNN7EXAMPLE\/\d{8}\/eu-west-1\/s3\/aws4_request/);
});
