import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { parseSetting } from '../../lib/setting-check/load.js';
import { resolveHosts } from '../../lib/setting/resolve.js';
import { issuesOf, minimalHost } from './fixtures/helpers.js';

const base = {
  name: 'base.com',
  listen: '*:8080',
  aliases: ['b.example.com'],
  mode: { volatile: true },
  origin: { protocol: 'https', address: ['10.0.0.1:443'], address2: ['10.0.0.2:443'] },
  functions: { network: { cache: { ttl: { default: 600, negative: 5 } } } },
};

t.test('a host copies everything but name and mode from a basehost named in hosting[]', async (t) => {
  const s = parseSetting({ hosting: [base, { name: 'copy.com', mode: { basehost: 'base.com' } }] });
  const [, copy] = resolveHosts(s);
  t.equal(copy!.name, 'copy.com');
  t.same(copy!.listen, { host: null, port: 8080 });
  t.strictSame(copy!.aliases, ['b.example.com']);
  t.strictSame(copy!.origin, { protocol: 'https', address: ['10.0.0.1:443'], address2: ['10.0.0.2:443'] });
  t.equal(copy!.mode.volatile, false, 'mode is not copied');
  t.equal(copy!.mode.basehost, 'base.com');
  t.equal(copy!.functions.network.cache.ttl.default, 600);
});

t.test('explicit settings of the referring host win member by member over its basehost', async (t) => {
  const s = parseSetting({
    hosting: [base, {
      name: 'copy.com',
      mode: { basehost: 'base.com' },
      origin: { address: ['10.9.9.9'] },
      functions: { network: { cache: { ttl: { negative: 30 } } } },
    }],
  });
  const copy = resolveHosts(s)[1]!;
  t.strictSame(copy.origin, { protocol: 'https', address: ['10.9.9.9'], address2: ['10.0.0.2:443'] }, 'arrays replace, objects merge');
  t.equal(copy.functions.network.cache.ttl.default, 600);
  t.equal(copy.functions.network.cache.ttl.negative, 30);
  t.equal(copy.listen!.port, 8080, 'the base listen, not the default *:80');
});

t.test('a basehost may be a host file relative to the setting file directory, with chains', async (t) => {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'basehost-'));
  t.teardown(() => fs.rm(dir, { recursive: true, force: true }));
  await fs.mkdir(path.join(dir, 'hosts'));
  await fs.writeFile(path.join(dir, 'hosts/root.json'), JSON.stringify({ listen: '*:81', origin: { address: ['root.example.com'] } }));
  // A chained file path is relative to the file that names it.
  await fs.writeFile(path.join(dir, 'hosts/mid.json'), JSON.stringify({ mode: { basehost: 'root.json' }, aliases: ['mid.example.com'] }));
  const s = parseSetting({
    hosting: [
      { name: 'file.com', mode: { basehost: 'hosts/mid.json' }, listen: '*:82' },
      { name: 'chain.com', mode: { basehost: 'file.com' } },
    ],
  }, { baseDir: dir });
  const [file, chain] = resolveHosts(s);
  t.same(file!.listen, { host: null, port: 82 });
  t.strictSame(file!.aliases, ['mid.example.com']);
  t.strictSame(file!.origin.address, ['root.example.com']);
  t.same(chain!.listen, { host: null, port: 82 });
  t.strictSame(chain!.origin.address, ['root.example.com']);
});

t.test('a basehost that names neither a host nor a readable file is refused at its path', async (t) => {
  const issues = issuesOf({ hosting: [{ ...minimalHost, mode: { basehost: 'missing.json' } }] }, '/nonexistent-dir');
  t.equal(issues.length, 1);
  t.equal(issues[0]!.path, 'hosting[0].mode.basehost');
  t.match(issues[0]!.message, /"missing\.json" is neither a host of hosting\[\] nor a valid host file: no file \/nonexistent-dir\/missing\.json/);
});

t.test('a host file with a bad member is refused naming the member inside the file', async (t) => {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'basehost-'));
  t.teardown(() => fs.rm(dir, { recursive: true, force: true }));
  await fs.writeFile(path.join(dir, 'bad.json'), JSON.stringify({ origin: { address: ['10.0.0.1'], protocl: 'http' } }));
  const issues = issuesOf({ hosting: [{ name: 'x.com', mode: { basehost: 'bad.json' } }] }, dir);
  t.equal(issues.length, 1);
  t.equal(issues[0]!.path, 'hosting[0].mode.basehost');
  t.match(issues[0]!.message, /origin\.protocl: unknown field/);
});

t.test('a basehost cycle is refused with the chain', async (t) => {
  const issues = issuesOf({
    hosting: [
      { name: 'a.com', mode: { basehost: 'b.com' } },
      { name: 'b.com', mode: { basehost: 'c.com' } },
      { name: 'c.com', mode: { basehost: 'a.com' } },
      { name: 'self.com', mode: { basehost: 'self.com' } },
    ],
  });
  t.strictSame(issues, [
    { path: 'hosting[0].mode.basehost', message: 'basehost cycle: a.com -> b.com -> c.com -> a.com' },
    { path: 'hosting[1].mode.basehost', message: 'basehost cycle: b.com -> c.com -> a.com -> b.com' },
    { path: 'hosting[2].mode.basehost', message: 'basehost cycle: c.com -> a.com -> b.com -> c.com' },
    { path: 'hosting[3].mode.basehost', message: 'basehost cycle: self.com -> self.com' },
  ]);
});

t.test('a cycle through host files is refused too', async (t) => {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'basehost-'));
  t.teardown(() => fs.rm(dir, { recursive: true, force: true }));
  await fs.writeFile(path.join(dir, 'one.json'), JSON.stringify({ mode: { basehost: 'two.json' } }));
  await fs.writeFile(path.join(dir, 'two.json'), JSON.stringify({ mode: { basehost: 'one.json' } }));
  const issues = issuesOf({ hosting: [{ name: 'x.com', mode: { basehost: 'one.json' } }] }, dir);
  t.equal(issues.length, 1);
  t.match(issues[0]!.message, /^basehost cycle: x\.com -> .*one\.json -> .*two\.json -> .*one\.json$/);
});
