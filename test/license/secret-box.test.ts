// The encryption of encryptpassword and enc: secrets, in-process: deterministic per key and
// plain text, bound to the license, and checked at the JSON path of each secret member.
import crypto from 'node:crypto';
import t from 'tap';
import { signLicense } from '../../lib/license/license.js';
import { checkSecrets, encryptSecret, secretKeyOf } from '../../lib/license/secret-box.js';

const key = crypto.generateKeyPairSync('ed25519').privateKey;
const fields = { Name: 'ACME', Type: 'Enterprise', SerialNumber: 'SN-1', AllowedFeatures: 'ALL', NotBefore: '20260101000000Z', NotAfter: '20990101000000Z' };
const one = secretKeyOf(signLicense(fields, key));
const other = secretKeyOf(signLicense({ ...fields, SerialNumber: 'SN-2' }, key));

t.test('the same key and plain text give the same value; another plain text or license another one', async (t) => {
  const v = encryptSecret(one, 'pässword');
  t.match(v, /^enc:[A-Za-z0-9_-]+$/);
  t.equal(encryptSecret(one, 'pässword'), v);
  t.not(encryptSecret(one, 'password'), v);
  t.not(encryptSecret(other, 'pässword'), v);
  t.not(encryptSecret(one, ''), encryptSecret(one, ' '), 'even empty and one space differ');
});

t.test('enc: values of secret members must decrypt under the key; other members and plain values are left alone', async (t) => {
  const v = encryptSecret(one, 's3cret');
  const setting = { env: { x: [{ info: { secretAccessKey: v, accessKeyId: 'plain', note: 'enc:not-a-secret-member' } }] } };
  t.strictSame(checkSecrets(setting, one), []);
  t.match(checkSecrets(setting, other), [{ path: 'env.x[0].info.secretAccessKey', message: /does not decrypt under this node's license/ }]);
  t.match(checkSecrets(setting, undefined), [{ path: 'env.x[0].info.secretAccessKey', message: /no valid license/ }]);
  const cut = { password: v.slice(0, 20) };
  t.match(checkSecrets(cut, one), [{ path: 'password' }], 'a truncated value is refused');
  const raw = Buffer.from(v.slice(4), 'base64url');
  raw[raw.length - 1] ^= 1;
  t.match(checkSecrets({ apiKey: `enc:${raw.toString('base64url')}` }, one), [{ path: 'apiKey' }], 'an altered tag is refused');
});
