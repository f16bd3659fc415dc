// Host.State (and /get/license State): Healthy, Inactive by the license, Emergency when the node
// cannot serve from its cache or keep its workers up.
import t from 'tap';
import os from 'node:os';
import { StatsService, type StatsServiceDeps } from '../../lib/stats/service.js';
import type { Setting } from '../../lib/setting/types.js';

function service(over: Partial<StatsServiceDeps>): StatsService {
  return new StatsService({
    setting: () => ({ hosting: [], meta: { group: '', labelGroupToMetrics: true } }) as unknown as Setting,
    version: 't', pids: () => [process.pid], disks: () => [os.tmpdir()],
    licenseState: () => 'Healthy', crashLooping: () => false, ...over,
  });
}

t.test('a node with a valid license, a reachable disk and steady workers is Healthy', async (t) => {
  t.equal(service({}).state(), 'Healthy');
});

t.test('an invalid license makes the node Inactive', async (t) => {
  t.equal(service({ licenseState: () => 'Inactive' }).state(), 'Inactive');
});

t.test('a worker crash loop or every cache disk unreachable makes the node Emergency', async (t) => {
  t.equal(service({ crashLooping: () => true }).state(), 'Emergency');
  const s = service({ disks: () => ['/nonexistent/svc-disk0', '/nonexistent/svc-disk1'] });
  t.equal(s.state(), 'Emergency');
  t.same(s.source.system().Storage.Disk.map((d) => d.Status), ['Invalid', 'Invalid'], 'each disk shows Invalid');
  t.equal(service({ disks: () => ['/nonexistent/svc-disk0', os.tmpdir()] }).state(), 'Healthy', 'one disk left is enough');
});
