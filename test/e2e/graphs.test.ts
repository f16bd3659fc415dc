// Black-box: /graph on the management port of a real node. Every resource and type answers a
// PNG of its size; known traffic draws the Main line inside the plot; two graphs asked at once
// both come; the history (and the Peak it feeds) is still there after a restart.
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { GLOBAL_RESOURCES, VHOST_RESOURCES } from '../../lib/graph/resources.js';
import { GRAPH_TYPES } from '../../lib/graph/types.js';
import { LINE_COLORS, PEAK_COLOR, plotArea } from '../../lib/graph/draw.js';
import { TestOrigin } from '../helpers/origin.js';
import { freePort } from '../helpers/ports.js';
import { rawRequest } from '../helpers/raw-client.js';
import { startServer, startWithSetting, type RunningServer } from '../helpers/server.js';
import { countColor, pngSize, rgb } from '../helpers/png.js';
import { waitFor } from '../helpers/wait.js';

const MAIN = rgb(LINE_COLORS[0]);
const SUB = rgb(LINE_COLORS[1]);
const PEAK = rgb(PEAK_COLOR);

async function get(server: RunningServer, p: string): Promise<{ status: number; type: string; body: Buffer }> {
  const r = await fetch(`http://127.0.0.1:${server.apiPort}${p}`);
  return { status: r.status, type: r.headers.get('content-type') ?? '', body: Buffer.from(await r.arrayBuffer()) };
}

/**
 * Pixels of a colour in the plot area of a graph above its zero line (a measured 0 is drawn
 * along the bottom edge: the rows there are left out).
 */
async function inPlot(png: Buffer, color: [number, number, number]): Promise<number> {
  const { width, height } = pngSize(png);
  const a = plotArea(width, height);
  return countColor(png, { x: a.x + 1, y: a.y + 1, w: a.w - 2, h: a.h - 5 }, color);
}

t.test('graphs of a live node', async (t) => {
  const origin = await new TestOrigin().start();
  origin.on('/obj', (_q, res) => { res.writeHead(200, { 'cache-control': 'max-age=600', 'content-length': 5000 }); res.end('y'.repeat(5000)); });
  const port = await freePort();
  const quiet = await freePort();
  let server = await startServer([
    { name: 'h.test', listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}`] } },
    { name: 'quiet.test', listen: `127.0.0.1:${quiet}`, origin: { address: [`127.0.0.1:${origin.port}`] } },
  ]);
  t.teardown(async () => { await server.stop(); await origin.stop(); });

  const trafficAt = Date.now();
  for (let i = 0; i < 20; i++) {
    const r = await rawRequest(port, 'GET /obj HTTP/1.1\r\nHost: h.test\r\nConnection: close\r\n\r\n');
    t.equal(r.status, 200);
  }
  // The history samples once a second: the traffic shows once its second is closed.
  const drawn = await waitFor(async () => {
    const r = await get(server, '/graph/vhost/client_http_res_day.png?vhost=h.test');
    return r.status === 200 && (await inPlot(r.body, MAIN)) > 0;
  }, { timeoutMs: 15_000, intervalMs: 250 });
  t.ok(drawn, 'the responses of h.test are drawn in green inside the plot');

  await t.test('every resource and type answers a PNG of the size of its type', async (t) => {
    for (const [kind, list] of [['', GLOBAL_RESOURCES], ['vhost/', VHOST_RESOURCES]] as const) {
      for (const r of list) {
        for (const type of Object.values(GRAPH_TYPES)) {
          const res = await get(server, `/graph/${kind}${r.name}_${type.name}.png`);
          t.equal(res.status, 200, `${kind}${r.name}_${type.name}`);
          t.equal(res.type, 'image/png');
          t.same(pngSize(res.body), { width: type.width, height: type.height }, `${kind}${r.name}_${type.name} size`);
        }
      }
    }
  });

  await t.test('one host, the sum of all hosts and an idle host are told apart', async (t) => {
    const one = await get(server, '/graph/vhost/client_traffic_dash.png?vhost=h.test');
    t.ok(await inPlot(one.body, SUB) > 0, 'h.test outbound traffic drawn in blue');
    const all = await get(server, '/graph/vhost/client_traffic_day.png');
    t.ok(await inPlot(all.body, SUB) > 0, 'the sum of all hosts has it too');
    const idle = await get(server, '/graph/vhost/client_traffic_day.png?vhost=quiet.test');
    t.equal(await inPlot(idle.body, SUB), 0, 'nothing rises above zero for a host without traffic');
    const ratio = await get(server, '/graph/vhost/hitratio_day.png?vhost=h.test');
    t.ok(await inPlot(ratio.body, MAIN) > 0, 'the hit ratio of h.test is drawn');
    const cpu = await get(server, '/graph/cpu_day.png');
    t.ok(await inPlot(cpu.body, MAIN) > 0, 'the node\'s CPU use is drawn');
    t.equal(await inPlot(cpu.body, PEAK), 0, 'no Peak line below week');
  });

  await t.test('graphs asked at the same time are drawn one after another, none refused', async (t) => {
    const names = ['cpu_day', 'mem_week', 'loadavg_month', 'eq_year', 'tcpsocket_dash', 'iowait_day'];
    const all = await Promise.all(names.map((n) => get(server, `/graph/${n}.png`)));
    for (const [i, r] of all.entries()) {
      t.equal(r.status, 200, names[i]!);
      t.ok(pngSize(r.body).width > 0);
    }
  });

  await t.test('a graph that does not exist, a bad or unknown host is refused with its code', async (t) => {
    const cases: Array<[string, number, string]> = [
      ['/graph/nosuch_day.png', 404, 'GRAPH_NOT_FOUND'],
      ['/graph/cpu_hour.png', 404, 'GRAPH_NOT_FOUND'],
      ['/graph/cpu_day.gif', 404, 'GRAPH_NOT_FOUND'],
      ['/graph/hitratio_day.png', 404, 'GRAPH_NOT_FOUND'],
      ['/graph/vhost/cpu_day.png', 404, 'GRAPH_NOT_FOUND'],
      ['/graph/cpu_day.png?vhost=h.test', 400, 'GRAPH_BAD_QUERY'],
      ['/graph/vhost/hitratio_day.png?vhost=', 400, 'GRAPH_BAD_QUERY'],
      ['/graph/vhost/hitratio_day.png?vhost=nobody.test', 404, 'VHOST_NOT_FOUND'],
    ];
    for (const [p, status, code] of cases) {
      const r = await get(server, p);
      t.equal(r.status, status, p);
      const body = JSON.parse(r.body.toString()) as { status: string; code: string; reason: string };
      t.equal(body.code, code, p);
      t.equal(body.status, 'fail');
      t.ok(body.reason.length > 0);
    }
  });

  await t.test('the history and its Peak survive a restart', async (t) => {
    const { dir, settingPath, basePort, apiPort } = server;
    t.equal(await server.stop(), 0);
    t.ok(fs.existsSync(path.join(dir, 'state', 'graph-history.sqlite')), 'the round-robin store is a file in the state directory');
    server = await startWithSetting(dir, settingPath, basePort, {}, apiPort);
    const day = await get(server, '/graph/vhost/client_http_res_day.png?vhost=h.test');
    t.ok(await inPlot(day.body, MAIN) > 0, 'the responses before the restart are still drawn');
    // The Peak (largest 5-minute value) shows above the 30-minute mean once the quiet seconds of
    // the new start have lowered that mean; until then the green Main covers it. Across a
    // 30-minute boundary the new step has neither, so the check needs the same 30 minutes.
    const sameHalfHour = Math.floor(trafficAt / 1_800_000) === Math.floor(Date.now() / 1_800_000);
    let week = await get(server, '/graph/vhost/client_http_res_week.png?vhost=h.test');
    const peakShown = await waitFor(async () => {
      week = await get(server, '/graph/vhost/client_http_res_week.png?vhost=h.test');
      return (await inPlot(week.body, PEAK)) > 0;
    }, { timeoutMs: 15_000, intervalMs: 250 });
    if (sameHalfHour) t.ok(peakShown, 'the week graph draws the pink Peak of the 5-minute steps');
    t.ok(await inPlot(week.body, MAIN) > 0);
  });
});
