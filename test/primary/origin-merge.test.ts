// /monitoring/origin over several workers: each has its own view of the origin addresses; the
// primary shows one item per host (lib/primary/rt-bridge.ts).
import t from 'tap';
import { mergeOriginStatus } from '../../lib/primary/rt-bridge.js';

const view = (state: 'Active' | 'Inactive', ip: Record<string, number>, inactive = state === 'Inactive') => ({
  VirtualHost: 'a.com',
  Address: [{ 'origin.a.com': state }],
  Address2: [{ '10.0.0.9': 'Active' as const }],
  ActiveIP: inactive ? [] : [ip],
  InactiveIP: inactive ? [ip] : [],
});

t.test('an address Inactive in any worker is Inactive, with the longest TTL among those workers', async (t) => {
  const m = mergeOriginStatus([view('Active', { '192.0.2.1': 40 }), view('Inactive', { '192.0.2.1': 300 }), view('Inactive', { '192.0.2.1': 120 })]);
  t.same(m, { VirtualHost: 'a.com', Address: [{ 'origin.a.com': 'Inactive' }], Address2: [{ '10.0.0.9': 'Active' }], ActiveIP: [], InactiveIP: [{ '192.0.2.1': 300 }] });
});

t.test('an IP Active in every worker keeps the shortest TTL (the soonest re-resolution)', async (t) => {
  const m = mergeOriginStatus([view('Active', { '192.0.2.1': 40 }), view('Active', { '192.0.2.1': 25 })]);
  t.same(m.Address, [{ 'origin.a.com': 'Active' }]);
  t.same(m.ActiveIP, [{ '192.0.2.1': 25 }]);
  t.same(m.InactiveIP, []);
});

t.test('IPs only one worker resolved are listed too', async (t) => {
  const m = mergeOriginStatus([view('Active', { '192.0.2.1': 40 }), view('Active', { '192.0.2.2': 60 })]);
  t.same(m.ActiveIP, [{ '192.0.2.1': 40 }, { '192.0.2.2': 60 }]);
});
