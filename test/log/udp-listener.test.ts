// The log listener of env.log.meta.port over real UDP on loopback: the line format, what a
// sub-component's sender delivers, a bad line reported once a minute, a port it cannot bind.
import dgram from 'node:dgram';
import t from 'tap';
import type { ErrorEvent } from '../../lib/log/global/error-codes.js';
import { formatUdpLine, parseUdpLine, udpLogSender } from '../../lib/log/global/udp-line.js';
import { UdpLogListener } from '../../lib/log/global/udp-listener.js';
import { until } from '../helpers/wait.js';

function listener(t: { teardown(fn: () => void): void }) {
  const errors: ErrorEvent[] = [];
  const infos: Array<{ message: string; fields: Record<string, unknown> }> = [];
  const l = new UdpLogListener({ error: (e) => errors.push(e), info: (message, fields) => infos.push({ message, fields }) });
  t.teardown(() => l.close());
  return { l, errors, infos };
}

t.test('a line is the log, the component and the rest; error lines carry a code of the table', async (t) => {
  const e = { log: 'error', component: 'disk-writer/0', code: '3001', detail: '/cache/a: EIO: i/o error, write' } as const;
  t.equal(formatUdpLine(e), 'error disk-writer/0 3001 /cache/a: EIO: i/o error, write');
  t.same(parseUdpLine(formatUdpLine(e)), e);
  t.same(parseUdpLine('info thumbnailer started with  2 threads'), { log: 'info', component: 'thumbnailer', message: 'started with  2 threads' });
  t.equal(parseUdpLine('warn x y'), undefined);
  t.equal(parseUdpLine('error x notacode'), undefined);
});

t.test('lines a sub-component sends reach the error and info logs', async (t) => {
  const { l, errors, infos } = listener(t);
  const port = await l.start(0);
  t.ok(port !== undefined && port > 0);
  const send = udpLogSender(port!);
  send({ log: 'error', component: 'disk-writer/1', code: '3002', detail: '/cache/b after 3 consecutive errors' });
  send({ log: 'info', component: 'disk-writer/1', message: 'index reopened' });
  await until(() => errors.length === 1 && infos.length === 1, 'both lines received');
  t.same(errors[0], { code: '3002', detail: 'disk-writer/1: /cache/b after 3 consecutive errors' });
  t.same(infos[0], { message: 'index reopened', fields: { component: 'disk-writer/1' } });
});

t.test('several lines in one datagram; lines not in the format are reported once a minute', async (t) => {
  const { l, errors, infos } = listener(t);
  const port = (await l.start(0))!;
  const s = dgram.createSocket('udp4');
  t.teardown(() => s.close());
  s.send('info a one\nnonsense here\ninfo a two\nerror a 9999 no such code\n', port, '127.0.0.1');
  await until(() => infos.length === 2 && errors.length === 1, 'two infos and one report');
  t.equal(errors[0]!.code, '4003');
  t.match(errors[0]!.detail, /^from 127\.0\.0\.1:\d+: nonsense here$/);
  s.send('more nonsense', port, '127.0.0.1');
  s.send('info a three', port, '127.0.0.1');
  await until(() => infos.length === 3, 'the next good line');
  t.equal(errors.length, 1, 'the second bad line within the minute is not reported');
});

t.test('a port that cannot be bound is reported (4002) and does not throw', async (t) => {
  const holder = dgram.createSocket('udp4');
  await new Promise<void>((r) => holder.bind(0, '127.0.0.1', () => r()));
  t.teardown(() => holder.close());
  const { l, errors } = listener(t);
  t.equal(await l.start(holder.address().port), undefined);
  t.equal(errors[0]?.code, '4002');
  t.match(errors[0]?.detail, /EADDRINUSE/);
});
