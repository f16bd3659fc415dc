// setting.json.example must run without root: every path it implies lives under ./var.
import path from 'node:path';
import t from 'tap';
import { loadSettingFile } from '../../lib/setting-check/load.js';
import { resolveHosts, resolvePath } from '../../lib/setting/resolve.js';
import { projectRoot } from '../helpers/server.js';
import { AccessControl } from '../../lib/access/access.js';

t.test('every path setting.json.example implies lies under the project var directory', async (t) => {
  const { setting, baseDir } = await loadSettingFile(path.join(projectRoot, 'setting.json.example'));
  const varDir = path.join(projectRoot, 'var') + path.sep;
  const under = (p: string, what: string): void => { t.ok(p.startsWith(varDir), `${what}: ${p}`); };
  under(setting.env.home + path.sep, 'env.home');
  for (const d of setting.env.cache.disks) under(resolvePath(setting, d.path), 'cache disk');
  under(resolvePath(setting, setting.env.cache.indexPath), 'cache index');
  under(resolvePath(setting, setting.env.log.meta.dir), 'env.log.meta.dir');
  for (const h of resolveHosts(setting, { baseDir })) {
    under(resolvePath(setting, h.functions.operations.log.meta.dir), `${h.name} log dir`);
  }
  for (const h of setting.hosting) {
    const listen = /:(\d+)$/.exec(h.listen)!;
    t.ok(Number(listen[1]) > 1024, `${h.name} listens above 1024`);
  }
  t.ok(setting.env.management.api.port > 1024);
});

t.test('the example\'s admin on loopback may restart and stop the node (svc restart is not 401), not install', async (t) => {
  const { setting } = await loadSettingFile(path.join(projectRoot, 'setting.json.example'));
  const access = new AccessControl(setting.env.management.api);
  for (const p of ['/command/service/restart', '/command/service/stop', '/setting/deploy/local', '/monitoring/status']) {
    t.match(access.check('127.0.0.1', p), { allowed: true, role: 'admin' }, p);
  }
  t.match(access.check('127.0.0.1', '/command/install'), { allowed: false }, 'a checkout has nothing to install into');
  t.match(access.check('10.0.0.1', '/command/service/restart'), { allowed: false }, 'loopback only');
});
