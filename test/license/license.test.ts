import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import {
  canonicalText, formatLicenseTime, issueLicense, keygen, licensePaths, LicenseService, parseLicense, parseLicenseTime,
  verifyLicense, verifyLicenseFile,
} from '../../lib/license/index.js';
import { settingWith } from './helpers.js';

const DAY = 86_400_000;

async function tmpdir(t: { teardown(fn: () => unknown): void }): Promise<string> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'svc-license-'));
  t.teardown(() => fs.rm(dir, { recursive: true, force: true }));
  return dir;
}

t.test('a license issued with keygen and sign verifies and is Available', async (t) => {
  const dir = await tmpdir(t);
  const { key, pub } = await keygen(dir);
  t.match(await fs.readFile(key, 'utf8'), /BEGIN PRIVATE KEY/);
  t.equal((await fs.stat(key)).mode & 0o777, 0o600, 'the private key is readable by its owner only');
  const { xml } = await issueLicense({ key, name: 'ACME & Sons', type: 'Enterprise', serial: 'SN-1', days: 365 });
  await fs.writeFile(path.join(dir, 'license.xml'), xml);
  const info = await verifyLicenseFile(path.join(dir, 'license.xml'), pub);
  t.equal(info.Name, 'ACME & Sons');
  t.equal(info.Status, 'Available');
  t.equal(info.AllowedFeatures, 'ALL');
  t.equal(info.Validity.RemainDays, 365);
  t.match(info.Validity.NotAfter, /^\d{14}Z$/);
  await t.rejects(keygen(dir), /exists; use --force/, 'keygen does not overwrite a key pair by accident');
});

t.test('the signature covers the canonical fields, not the formatting of the XML', async (t) => {
  const dir = await tmpdir(t);
  const { key, pub } = await keygen(dir);
  const { xml, license } = await issueLicense({ key, name: 'A', type: 'T', serial: 'S', days: 10 });
  t.equal(canonicalText(license), `Name=A\nType=T\nSerialNumber=S\nAllowedFeatures=ALL\nNotBefore=${license.NotBefore}\nNotAfter=${license.NotAfter}\n`);
  const publicKey = crypto.createPublicKey(await fs.readFile(pub, 'utf8'));
  const reformatted = xml.replace('<?xml version="1.0" encoding="UTF-8"?>\n', '<!-- issued by test -->')
    .replace(/\n\s*/g, '')
    .replace('<Name>A</Name>', '<Name><![CDATA[A]]></Name>')
    .replace('<Type>T</Type>', '<Type>&#84;</Type>');
  t.ok(verifyLicense(parseLicense(reformatted), publicKey), 'comments, white space, CDATA and character references do not matter');
  t.notOk(verifyLicense(parseLicense(xml.replace('<SerialNumber>S<', '<SerialNumber>X<')), publicKey), 'a changed field breaks it');
  const other = crypto.generateKeyPairSync('ed25519').publicKey;
  t.notOk(verifyLicense(parseLicense(xml), other), 'another key does not verify it');
});

t.test('an RSA issuer key signs rsa-sha256 licenses', async (t) => {
  const dir = await tmpdir(t);
  const pair = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
  await fs.writeFile(path.join(dir, 'rsa.key'), pair.privateKey.export({ type: 'pkcs8', format: 'pem' }));
  const { license, xml } = await issueLicense({ key: path.join(dir, 'rsa.key'), name: 'A', type: 'T', serial: 'S', days: 1 });
  t.equal(license.signature.alg, 'rsa-sha256');
  t.match(xml, /<Signature alg="rsa-sha256">/);
  t.ok(verifyLicense(parseLicense(xml), pair.publicKey));
  t.notOk(verifyLicense(parseLicense(xml), crypto.generateKeyPairSync('ed25519').publicKey), 'an Ed25519 key does not verify an RSA signature');
});

t.test('malformed license documents are refused with the parser detail', async (t) => {
  const ok = '<License><Name>A</Name><Type>T</Type><SerialNumber>S</SerialNumber><AllowedFeatures>ALL</AllowedFeatures>'
    + '<NotBefore>20260101000000Z</NotBefore><NotAfter>20270101000000Z</NotAfter><Signature alg="ed25519">AAAA</Signature></License>';
  t.equal(parseLicense(ok).Name, 'A');
  const cases: Array<[string, RegExp]> = [
    ['not xml at all', /text before the root element/],
    ['', /empty document/],
    ['<License><Name>A</License>', /line 1, column \d+: <\/License> closes <Name>/],
    ['<License>\n<Name>A</Name>\n', /line 3, column 1: element <License> is not closed/],
    [ok.replace('License>', 'Licence>'), /closes|expected <License>/],
    [ok.replace('<Type>T</Type>', ''), /<Type> is missing/],
    [ok.replace('<Type>T</Type>', '<Type>T</Type><Type>U</Type>'), /<Type> appears twice/],
    [ok.replace('<Type>T</Type>', '<Type>T</Type><Extra/>'), /unknown element <Extra>/],
    [ok.replace('20270101000000Z', '2027-01-01'), /<NotAfter> "2027-01-01" is not a yyyymmddhhmmssZ time/],
    [ok.replace('20270101000000Z', '20270231000000Z'), /<NotAfter>/],
    [ok.replace('20270101000000Z', '20250101000000Z'), /<NotAfter> is not after <NotBefore>/],
    [ok.replace('ed25519', 'md5'), /not ed25519 or rsa-sha256/],
    [ok.replace('AAAA', '!!'), /not base64/],
    [ok.replace('<Name>A</Name>', '<Name>A&foo;</Name>'), /unknown entity "&foo;"/],
    [`<!DOCTYPE x>${ok}`, /DOCTYPE is not allowed/],
    [`${ok}<x/>`, /content after the root element/],
  ];
  for (const [xml, detail] of cases) t.throws(() => parseLicense(xml), detail, JSON.stringify(xml.slice(0, 60)));
});

t.test('license times are yyyymmddhhmmssZ in UTC', async (t) => {
  t.equal(parseLicenseTime('20260102030405Z'), Date.UTC(2026, 0, 2, 3, 4, 5));
  t.equal(formatLicenseTime(Date.UTC(2026, 0, 2, 3, 4, 5, 678)), '20260102030405Z');
  for (const bad of ['20260102030405', '2026010203040Z', '20261301000000Z', '20260101240000Z', '20260101006000Z']) {
    t.equal(parseLicenseTime(bad), undefined, bad);
  }
});

t.test('the service follows the clock: Available, then Expired and Inactive, RemainDays counting down', async (t) => {
  const dir = await tmpdir(t);
  const { key, pub } = await keygen(dir);
  const start = Date.UTC(2026, 0, 1);
  const { xml } = await issueLicense({ key, name: 'A', type: 'T', serial: 'S', days: 30, now: start });
  await fs.writeFile(path.join(dir, 'license.xml'), xml);
  let now = start + DAY / 2;
  const s = await LicenseService.open({ path: path.join(dir, 'license.xml'), publicKey: pub, now: () => now });
  t.equal(s.current().Status, 'Available');
  t.equal(s.current().Validity.RemainDays, 30, 'a part of a day left counts as a day');
  t.equal(s.state(), 'Healthy');
  now = start + 29 * DAY + 1;
  t.equal(s.current().Validity.RemainDays, 1);
  now = start + 30 * DAY;
  t.equal(s.current().Status, 'Expired');
  t.equal(s.current().Validity.RemainDays, 0);
  t.equal(s.current().Name, 'A', 'an expired license still shows its fields');
  t.equal(s.state(), 'Inactive');
  t.match(s.problem(), /license expired at/);
  now = start - 1;
  t.equal(s.current().Status, 'Invalid', 'a license whose period has not begun licenses nothing yet');
  t.equal(s.state(), 'Inactive');
});

t.test('a missing license is None, a tampered or unverifiable one Invalid; both are Inactive', async (t) => {
  const dir = await tmpdir(t);
  const { key, pub } = await keygen(dir);
  const file = path.join(dir, 'license.xml');
  const s = new LicenseService({ path: file, publicKey: pub });
  await s.load();
  t.equal(s.current().Status, 'None');
  t.strictSame(s.current().Validity, { NotBefore: '', NotAfter: '', RemainDays: 0 });
  t.equal(s.state(), 'Inactive');
  const { xml } = await issueLicense({ key, name: 'A', type: 'T', serial: 'S', days: 30 });
  await fs.writeFile(file, xml.replace('<Name>A<', '<Name>B<'));
  await s.load();
  t.equal(s.current().Status, 'Invalid');
  t.equal(s.current().Name, 'B', 'the fields are shown so the operator sees which license it is');
  t.equal(s.problem(), 'Invalid signature');
  await fs.writeFile(file, xml);
  const noKey = await LicenseService.open({ path: file, publicKey: path.join(dir, 'missing.pub') });
  t.equal(noKey.current().Status, 'Invalid');
  t.match(noKey.problem(), /cannot read the public key/);
  await fs.writeFile(file, 'garbage');
  await s.load();
  t.equal(s.current().Status, 'Invalid');
  t.match(s.problem(), /cannot parse license - line 1/);
});

t.test('the license paths come from env.license, relative to env.home, with defaults in env.home', async (t) => {
  t.strictSame(licensePaths(settingWith({ env: { home: '/srv/svc' } })), { path: '/srv/svc/license.xml', publicKey: '/srv/svc/license.pub' });
  const s = settingWith({ env: { home: '/srv/svc' } });
  (s.env as Record<string, unknown>).license = { path: 'lic/current.xml', publicKey: '/etc/svc/issuer.pub' };
  t.strictSame(licensePaths(s), { path: '/srv/svc/lic/current.xml', publicKey: '/etc/svc/issuer.pub' });
});
