// A stale-while-revalidate refresh is a fetch in flight like any other: a purge answered while
// it runs must not be undone by what it brings back later (it was asked before the purge).
import t from 'tap';
import type { ServerResponse } from 'node:http';
import { request } from 'undici';
import { cacheBench, HOST, reply } from './fixtures/bench.js';
import { waitFor } from '../../helpers/wait.js';

const { origin, server, get } = await cacheBench();


const purge = async (path: string): Promise<number> => {
  const r = await request(`http://127.0.0.1:${server.apiPort}/command/purge?url=${HOST}${path}`);
  await r.body.text();
  return r.statusCode;
};

for (const refreshAnswer of [200, 304]) {
  t.test(`a purge answered while a background refresh is held leaves no fresh copy of it (refresh answered ${refreshAnswer})`, async (t) => {
    const path = `/swr-purge-${refreshAnswer}`;
    let n = 0;
    let held: { res: ServerResponse; sent: boolean; answer: () => void } | undefined;
    origin.on(path, (q, res) => {
      n++;
      // The first copy is stale at once (stale-while-revalidate); later ones are fresh for long.
      const cc = n === 1 ? 'max-age=0, stale-while-revalidate=60' : 'max-age=600';
      const answer = refreshAnswer === 304 && n === 2
        ? () => { res.writeHead(304, { etag: '"p1"', 'cache-control': cc }); res.end(); }
        : () => reply(200, { etag: `"p${n}"`, 'cache-control': cc }, `fetch ${n}`)(q, res);
      if (n !== 2) { answer(); return; }
      // The background refresh: held until the purge has been answered.
      const h = { res, sent: false, answer };
      res.once('finish', () => { h.sent = true; });
      held = h;
    });
    t.equal((await get(path)).body, 'fetch 1');
    const stale = await get(path);
    t.equal(stale.headers['x-cache'], 'TCP_REFRESH_HIT', 'the stale copy is served and refreshed in the background');
    t.ok(await waitFor(() => held !== undefined), 'the refresh reached the origin');

    t.equal(await purge(path), 200, 'the purge is answered while the refresh is held');
    held!.answer();
    t.ok(await waitFor(() => held!.sent), 'the refresh answer was sent');

    const next = await get(path);
    t.not(next.headers['x-cache'], 'TCP_HIT', 'the next request is not a hit');
    t.equal(next.body, 'fetch 3', 'it went to the origin');
    // The refresh's answer reaches the server in the meantime: it must never be served.
    const served: string[] = [];
    for (let i = 0; i < 20; i++) served.push((await get(path)).body);
    t.same(served.filter((b) => b !== 'fetch 3'), [], 'only the copy fetched after the purge is served');
    t.equal(origin.count(path), 3);
  });
}
