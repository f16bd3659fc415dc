// `svc validate FILE` (compiled): the checks of an upload with its files, with the codes 1-5 of
// document 1 on stderr and exit 1, OK and exit 0 when the file and its linked files are fine.
import fs from 'node:fs/promises';
import path from 'node:path';
import t from 'tap';
import { svc } from './fixtures/node.js';
import { CERT, doc, host, KEY, tmpDir } from './fixtures/helpers.js';

t.test('svc validate checks fields, JSON and linked files, with the upload error codes', async (t) => {
  const dir = await tmpDir();
  t.teardown(() => fs.rm(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'setting.json');
  const withCert = doc({ port: 10040, hosting: [host('a.example.com', '10.0.0.1:80', { https: [{ cert: 'cert/a.pem', key: 'cert/a.key' }] })] });
  await fs.writeFile(file, JSON.stringify(withCert));

  const missing = await svc(['validate', file]);
  t.equal(missing.code, 1);
  t.equal(missing.stderr, `error 5: linked file not found\nhosting[0].https[0].cert: linked file not found: cert/a.pem\n`, 'a certificate the setting names is missing, named by its JSON path');

  await fs.mkdir(path.join(dir, 'cert'));
  await fs.writeFile(path.join(dir, 'cert/a.pem'), CERT);
  await fs.writeFile(path.join(dir, 'cert/a.key'), KEY);
  const ok = await svc(['validate', file]);
  t.equal(ok.code, 0, ok.stderr);
  t.equal(ok.stdout, `${file}: OK\n`);

  await fs.writeFile(file, JSON.stringify({ ...withCert, meta: { setting: { deploy: 'sometimes' } } }));
  const bad = await svc(['validate', file]);
  t.equal(bad.code, 1);
  t.match(bad.stderr, /^error 4: setting\.json content is wrong\nmeta\.setting\.deploy: /);

  await fs.writeFile(file, '{ not json');
  const broken = await svc(['validate', file]);
  t.equal(broken.code, 1);
  t.match(broken.stderr, /^error 3: setting\.json cannot be loaded\n/);
});
