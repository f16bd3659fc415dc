// Black-box: a setting is judged by one rule whichever way it comes in. `svc validate FILE`,
// `POST /setting/validate` and `POST /setting/upload` of a real node must agree, so that a
// setting that passes validation is not refused (or silently ignored) once uploaded.
import fs from 'node:fs/promises';
import path from 'node:path';
import t from 'tap';
import { freePort } from '../helpers/ports.js';
import { operatorRole, startServer } from '../helpers/server.js';
import { call, infoLog, svc, until } from '../lifecycle/fixtures/node.js';

// One node for the file: the refused setting of the first test leaves it as it was.
const port = await freePort();
const server = await startServer([{ name: 'c.com', listen: `127.0.0.1:${port}`, origin: { address: ['127.0.0.1:9'] } }], { extra: operatorRole });
t.teardown(() => server.stop());

t.test('a cloud dynamic origin address is refused alike by svc validate, /setting/validate and /setting/upload, at its JSON path', async (t) => {
  const setting = JSON.parse(await fs.readFile(server.settingPath, 'utf8')) as { hosting: Array<{ origin: { address: string[] } }> };
  setting.hosting[0]!.origin.address = ['#cloudA:vm:tag=web#:8080'];
  const body = JSON.stringify(setting);
  const file = path.join(server.dir, 'cloud.json');
  await fs.writeFile(file, body);
  const where = /hosting\[0\]\.origin\.address\[0\].*cloud dynamic/;

  const cli = await svc(['validate', file]);
  t.equal(cli.code, 1, `svc validate refuses it: ${cli.stdout}`);
  t.match(cli.stderr, where, 'svc validate names the JSON path');
  const validate = await call(server.apiPort, '/setting/validate', { body });
  t.equal(validate.json.status, 'fail', `/setting/validate refuses it: ${validate.text}`);
  t.equal(validate.json.error, 4);
  t.match(validate.json.reason, where);
  const upload = await call(server.apiPort, '/setting/upload', { body });
  t.equal(upload.json.status, 'fail', '/setting/upload refuses it');
  t.equal(upload.json.error, 4);
  t.match(upload.json.reason, where, 'upload gives the same reason as validate');
});

t.test('discovery named by the specification\'s fields alone (port, members) is accepted with a warning in svc validate, the validate and upload answers and the info log', async (t) => {
  const setting = JSON.parse(await fs.readFile(server.settingPath, 'utf8')) as { env: { management: { cluster: Record<string, unknown> } } };
  setting.env.management.cluster.discover = { port: 9900, members: ['10.0.0.2', '10.0.0.3:9900'] };
  const body = JSON.stringify(setting);
  const file = path.join(server.dir, 'discover.json');
  await fs.writeFile(file, body);
  const warning = /env\.management\.cluster\.discover: discovery is off: .*enable.*secret/;

  const cli = await svc(['validate', file]);
  t.equal(cli.code, 0, cli.stderr);
  t.match(cli.stderr, warning, 'svc validate warns');
  const validate = await call(server.apiPort, '/setting/validate', { body });
  t.equal(validate.json.status, 'OK', validate.text);
  t.match((validate.json.result as { warnings?: string[] }).warnings, [warning], 'the validate answer carries it');
  const upload = await call(server.apiPort, '/setting/upload', { body });
  t.equal(upload.json.status, 'OK', upload.text);
  t.match((upload.json.result as { warnings?: string[] }).warnings, [warning], 'the upload answer carries it');
  await until(async () => (warning.test(await infoLog(server)) ? true : undefined), 'the warning in the info log');

  setting.env.management.cluster.discover = { enable: false, members: ['10.0.0.2'] };
  const off = await call(server.apiPort, '/setting/validate', { body: JSON.stringify(setting) });
  t.equal((off.json.result as { warnings?: string[] }).warnings, undefined, 'discovery turned off on purpose: no warning');
});
