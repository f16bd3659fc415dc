// Host.State (and /get/license State): Healthy, Inactive by the license, Emergency when the node
// cannot serve from its cache or keep its workers up.
import t from 'tap';
import os from 'node:os';
import { StatsService, type StatsServiceDeps } from '../../lib/stats/service.js';
import type { Setting } from '../../lib/setting/types.js';
import { HOST_GAUGE_STRIDE, STRIDE } from '../../lib/record/counter-layout.js';
import { hostDocument } from '../../lib/stats/realtime-view.js';

function service(over: Partial<StatsServiceDeps>): StatsService {
  return new StatsService({
    setting: () => ({ hosting: [], meta: { group: '', labelGroupToMetrics: true } }) as unknown as Setting,
    version: 't', processes: () => [{ role: 'primary', pid: process.pid }], disks: () => [os.tmpdir()],
    licenseState: () => 'Healthy', licenseStatus: () => 'Available', crashLooping: () => false, managementAccess: () => ({ Allow: 0, Deny: 0 }), indexPath: () => '/nonexistent/index.db', ...over,
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
  t.same(s.source.system().Storage.Disk.map((d) => d.Status), ['Unmounted', 'Unmounted'], 'a disk whose directory is gone shows Unmounted');
  t.equal(service({ disks: () => ['/nonexistent/svc-disk0', os.tmpdir()] }).state(), 'Healthy', 'one disk left is enough');
});

t.test('a disk a worker\'s store excluded after write failures reads Invalid; none left usable makes the node Emergency', async (t) => {
  const s = service({ disks: () => [os.tmpdir()] });
  t.equal(s.state(), 'Healthy');
  const node = { serverSockets: 0, serverBusy: 0, eventLoopLag: 0, waitingWrites: 0, disks: ['Invalid'] };
  s.onDeltas({ type: 'stats-deltas', stride: STRIDE, hosts: [''], values: new Array(STRIDE).fill(0), gaugeStride: HOST_GAUGE_STRIDE, gauges: new Array(HOST_GAUGE_STRIDE).fill(0), node }, 1);
  t.equal(s.state(), 'Emergency');
  const doc = hostDocument(s.source, 'realtime') as { Host: { System: { Storage: { Disk: { Status: string }[] } } } };
  t.equal(doc.Host.System.Storage.Disk[0]!.Status, 'Invalid');
  s.workerGone(1);
  t.equal(s.state(), 'Healthy', 'the worker that saw it is gone: its view goes with it');
});
