import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { openGeoIp } from '../../lib/rules/geoip.js';
import { buildCountryMmdb } from '../helpers/mmdb.js';

t.test('a country database built by the test answers the country of an address', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-geo-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  fs.writeFileSync(path.join(dir, 'country.mmdb'), buildCountryMmdb({ '127.0.0.5/32': 'KR', '10.0.0.0/8': 'JP', '127.0.1.0/24': 'US' }));
  const geo = openGeoIp(dir);
  t.same(geo.files, ['country.mmdb']);
  t.equal(geo.lookup('127.0.0.5'), 'KR');
  t.equal(geo.lookup('10.200.3.4'), 'JP');
  t.equal(geo.lookup('127.0.1.77'), 'US');
  t.equal(geo.lookup('127.0.0.6'), undefined);
  t.equal(geo.lookup('::1'), undefined, 'an IPv6 address in an IPv4 database is unknown');
});

t.test('a file that is not a MaxMind database is refused by name', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-geo-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  fs.writeFileSync(path.join(dir, 'bad.mmdb'), 'not a database');
  t.throws(() => openGeoIp(dir), /bad\.mmdb is not a readable MaxMind database/);
});
