// Shared by the /get tests: a setting with three hosts (one with HTTPS), certificate files made
// with openssl in a temporary env.home, and a QuerySource the test can change.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseSetting } from '../../lib/setting-check/load.js';
import type { Setting } from '../../lib/setting/types.js';
import type { QuerySource } from '../../lib/query/index.js';

/** env.home with a.crt/a.key (a matching pair), other.key (another key) and junk.crt. */
export function certHome(): { home: string; cleanup: () => void } {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-query-'));
  const req = (name: string): void => {
    execFileSync('openssl', [
      'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-subj', `/CN=${name}`, '-days', '30',
      '-keyout', path.join(home, `${name}.key`), '-out', path.join(home, `${name}.crt`),
    ], { stdio: 'ignore' });
  };
  req('a');
  req('other');
  fs.writeFileSync(path.join(home, 'junk.crt'), '-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydA==\n-----END CERTIFICATE-----\n');
  return { home, cleanup: () => fs.rmSync(home, { recursive: true, force: true }) };
}

export function hosting(): Array<Record<string, unknown>> {
  return [
    {
      name: 'a.com',
      origin: { address: ['10.0.0.1:80', '10.0.0.3'], address2: ['10.0.0.2'] },
      functions: { hook: { enable: true, path: 'http://127.0.0.1:9/hook' } },
      https: [{ cert: 'a.crt', key: 'a.key', ca: 'a.crt' }],
    },
    { name: 'b.com', origin: { address: ['origin.b.com'] }, functions: { contents: { pagedesk: { meta: { enable: true } } } } },
    { name: 'c.com', origin: { address: ['10.0.0.9:8080'] } },
  ];
}

export function querySetting(home: string, hosts = hosting(), api: Record<string, unknown> = { allowList: [{ addr: '127.0.0.1' }] }): Setting {
  return parseSetting({ meta: { version: '7' }, env: { home, management: { api } }, hosting: hosts });
}

export interface MutableSource extends QuerySource {
  setting: Setting;
  pending: Setting | undefined;
  broken: Error | undefined;
}

export function source(setting: Setting): MutableSource {
  const s: MutableSource = {
    setting,
    pending: undefined,
    broken: undefined,
    running: () => {
      if (s.broken !== undefined) throw s.broken;
      return s.setting;
    },
    artifact: () => s.pending,
    discover: () => [],
  };
  return s;
}
