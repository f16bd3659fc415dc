// The request rules at validation: every pattern compiled as the workers will, each fault at the
// JSON path of its member.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { issuesOf, minimalHost } from '../setting/fixtures/helpers.js';
import { buildCountryMmdb } from '../helpers/mmdb.js';

const host = (extra: Record<string, unknown>) => ({ ...minimalHost, ...extra });
const ac = (matchingList: unknown[]) => ({ network: { http: { frontEnd: { accessControl: { enable: true, matchingList } } } } });

t.test('a urlRewrites pattern that does not compile is refused at its path', async (t) => {
  t.strictSame(issuesOf({ hosting: [host({ urlRewrites: [{ pattern: '$URL[/a]', replace: '/b' }, { pattern: '$URL[(]', replace: '/c' }] })] }), [
    { path: 'hosting[0].urlRewrites[1].pattern', message: 'URL[(]: Invalid regular expression: /(/: Unterminated group' },
  ]);
  const issues = issuesOf({ hosting: [host({ urlRewrites: [{ pattern: '!URL[/a]', replace: '/b' }, { pattern: '$URL[/a]&$URL[/b]', replace: '/c' }, { pattern: '$HOST[x]', replace: '/d' }] })] });
  t.same(issues.map((i) => i.path), ['hosting[0].urlRewrites[0].pattern', 'hosting[0].urlRewrites[1].pattern', 'hosting[0].urlRewrites[2].pattern']);
  t.match(issues[0]!.message, /cannot be negated/);
  t.match(issues[1]!.message, /at most one URL/);
  t.match(issues[2]!.message, /not a condition/);
});

t.test('a replace must be a URL of visible ASCII characters', async (t) => {
  t.strictSame(issuesOf({ hosting: [host({ urlRewrites: [{ pattern: '$URL[/a]', replace: '/b c' }, { pattern: '$URL[/a]', replace: '' }] })] }).map((i) => i.path), [
    'hosting[0].urlRewrites[0].replace', 'hosting[0].urlRewrites[1].replace',
  ]);
});

t.test('a country condition needs env.geoip.path with a database', async (t) => {
  const issues = issuesOf({ hosting: [host({ urlRewrites: [{ pattern: '$IP[KR]', replace: '/kr' }] })] });
  t.equal(issues.length, 1);
  t.equal(issues[0]!.path, 'hosting[0].urlRewrites[0].pattern');
  t.match(issues[0]!.message, /needs GeoIP/);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-geo-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const withGeo = { env: { geoip: { path: dir } }, hosting: [host({ urlRewrites: [{ pattern: '$IP[KR]', replace: '/kr' }] })] };
  t.match(issuesOf(withGeo), [{ path: 'env.geoip.path', message: /holds no \.mmdb database/ }, { path: 'hosting[0].urlRewrites[0].pattern' }]);
  fs.writeFileSync(path.join(dir, 'c.mmdb'), buildCountryMmdb({ '10.0.0.0/8': 'KR' }));
  t.strictSame(issuesOf(withGeo), []);
});

t.test('access control entries: the pattern, a redirect location and status', async (t) => {
  t.strictSame(issuesOf({ functions: ac([{ pattern: '$IP[10.0.0.0/8]', action: 'deny' }, { pattern: '$URL[/r/(.*)]', action: 'redirect', location: 'https://x/#1' }]) }), []);
  t.strictSame(issuesOf({ functions: ac([{ pattern: '$METHOD[]', action: 'deny' }]) }).map((i) => i.path), ['functions.network.http.frontEnd.accessControl.matchingList[0].pattern']);
  t.strictSame(issuesOf({ functions: ac([{ pattern: '$URLMATCH[/r]', action: 'redirect' }]) }), [
    { path: 'functions.network.http.frontEnd.accessControl.matchingList[0].location', message: 'required when action is redirect' },
  ]);
  t.strictSame(issuesOf({ functions: ac([{ pattern: '$URLMATCH[/r]', action: 'redirect', location: '/x', status: 304 }]) }), [
    { path: 'functions.network.http.frontEnd.accessControl.matchingList[0].status', message: 'must be one of 301, 302, 303, 307, 308' },
  ]);
  t.strictSame(issuesOf({ functions: ac([{ pattern: '$URLMATCH[/r]', action: 'redirect', location: 'https://example.com/a b' }]) }).map((i) => i.message), [
    'must be a URL of visible ASCII characters (percent-encode the others)',
  ]);
  t.strictSame(issuesOf({ hosting: [host({ functions: ac([{ pattern: '$URLMATCH[/r]', action: 'deny', location: '/x' }]) })] }), [
    { path: 'hosting[0].functions.network.http.frontEnd.accessControl.matchingList[0].location', message: 'only a redirect entry has a location' },
  ]);
  t.strictSame(issuesOf({ functions: ac([{ pattern: '$IP[1.2.3.4]', action: 'block' }]) }).map((i) => i.path), ['functions.network.http.frontEnd.accessControl.matchingList[0].action']);
});

t.test('a facade names another host that is not itself a facade', async (t) => {
  const hosting = [host({ name: 'a.com' }), host({ name: 'b.com', mode: { facadeHost: 'a.com' } }), host({ name: 'c.com', mode: { facadeHost: 'b.com' } })];
  t.strictSame(issuesOf({ hosting }), [{ path: 'hosting[2].mode.facadeHost', message: '"b.com" is itself a facade: name the host that serves' }]);
});
