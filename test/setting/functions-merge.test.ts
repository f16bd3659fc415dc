import t from 'tap';
import { parseSetting } from '../../lib/setting-check/load.js';
import { resolveHosts } from '../../lib/setting/resolve.js';
import { minimalHost } from './fixtures/helpers.js';

t.test('host functions override global functions member by member and defaults fill the rest', async (t) => {
  const s = parseSetting({
    functions: {
      network: {
        http: { backEnd: { session: { connectTimeout: 5, receiveTimeout: 20 } } },
        cache: { ttl: { default: 120 } },
      },
      hook: { enable: false, path: 'http://127.0.0.1:7000/hook', session: { receiveTimeout: 9 } },
    },
    hosting: [
      {
        ...minimalHost,
        functions: {
          network: { http: { backEnd: { session: { connectTimeout: 1 } } } },
          hook: { enable: true, matchingList: [{ pattern: '$URL[^/api/]' }] },
        },
      },
      { ...minimalHost, name: 'plain.com' },
    ],
  });
  const [custom, plain] = resolveHosts(s);
  const session = custom!.functions.network.http.backEnd.session;
  t.equal(session.connectTimeout, 1, 'host value');
  t.equal(session.receiveTimeout, 20, 'global value');
  t.equal(session.reuseTimeout, 60, 'built-in default');
  t.equal(session.maxConnections, 256, 'built-in default');
  t.equal(custom!.functions.network.cache.ttl.default, 120, 'global value in another branch');
  t.equal(custom!.functions.hook.enable, true);
  t.equal(custom!.functions.hook.path, 'http://127.0.0.1:7000/hook');
  t.equal(custom!.functions.hook.session.receiveTimeout, 9);
  t.strictSame(custom!.functions.hook.matchingList, [{ pattern: '$URL[^/api/]' }]);
  t.strictSame(plain!.functions, s.functions, 'a host without functions runs the global ones');
  t.equal(s.functions.network.http.backEnd.session.connectTimeout, 5, 'the global functions are not changed');
});

t.test('arrays in host functions replace the global array whole', async (t) => {
  const s = parseSetting({
    functions: { operations: { log: { access: { backup: ['a', 'b'], rolling: { size: 1 } } } }, contents: { pagedesk: { dom: { remove: { elements: ['font', 'center'] } } } } },
    env: { log: { repository: { list: ['a', 'b', 'c'].map((name) => ({ name, type: 'statsd', rolling: '* *', path: '/', endpoint: {} })) } } },
    hosting: [{ ...minimalHost, functions: { operations: { log: { access: { backup: ['c'] } } }, contents: { pagedesk: { dom: { remove: { elements: [] } } } } } }],
  });
  const [h] = resolveHosts(s);
  t.strictSame(h!.functions.operations.log.access.backup, ['c']);
  t.strictSame(h!.functions.contents.pagedesk.dom.remove.elements, []);
  t.equal(h!.functions.operations.log.access.retention, 10);
});

t.test('a host function block is partial: nothing of it is required', async (t) => {
  const s = parseSetting({ hosting: [{ ...minimalHost, functions: { network: { cache: {} }, contents: { pagedesk: { meta: { enable: true } } } } }] });
  const [h] = resolveHosts(s);
  t.equal(h!.functions.contents.pagedesk.meta.enable, true);
  t.equal(h!.functions.contents.pagedesk.meta.keyword, 'pagedesk');
  t.strictSame(s.hosting[0]!.functions, { network: { cache: {} }, contents: { pagedesk: { meta: { enable: true } } } }, 'kept as written');
});

t.test('a wrong type in host functions is refused at its path', async (t) => {
  t.throws(() => parseSetting({ hosting: [{ ...minimalHost, functions: { network: { cache: { ttl: { default: '1h' } } } } }] }), {
    code: 'SETTING_INVALID',
    message: 'hosting[0].functions.network.cache.ttl.default: must be number, got string',
  });
});
