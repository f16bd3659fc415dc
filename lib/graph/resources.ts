// The graph resources of document 1 and the lines of each (README, "Graphs", says the same).
// Global resources read the node's System members; virtual-host resources read one host (or,
// summed, every host). Members named here are document 1's spellings (test/graph/resources.test.ts
// checks them against its list), so they fill in as the statistics service carries them.
import os from 'node:os';
import { fields, fromDoc, mean, member, rate, results, type ResourceDef } from './lines.js';

const pct = 0.01;

const hitResults = results('TCP_HIT', 'TCP_IMS_HIT', 'TCP_REFRESH_HIT', 'TCP_REF_FAIL_HIT', 'TCP_NEGATIVE_HIT', 'TCP_REDIRECT_HIT');
const requests = fields('requests');
const clientOut = fields('responseHeadBytes', 'responseBodyBytes');
const originIn = fields('originBytesReceived');
const answered = (row: Float64Array): number => requests(row) - fields('unanswered')(row);
const originRequests = fields('originRequests');
const originAnswered = (row: Float64Array): number => originRequests(row) - fields('originUnanswered')(row);

/** The `/` entry of ClientTraffic.Traffic[] (the whole host). */
function rootTraffic(doc: Record<string, unknown>): Record<string, unknown> | undefined {
  const list = (doc.ClientTraffic as { Traffic?: unknown } | undefined)?.Traffic;
  if (!Array.isArray(list)) return undefined;
  return list.find((e: unknown) => (e as { Path?: unknown } | null)?.Path === '/') as Record<string, unknown> | undefined;
}

export const GLOBAL_RESOURCES: readonly ResourceDef[] = [
  { name: 'cpu', title: 'CPU usage', unit: '%', lines: [
    { label: 'Kernel+User', value: (s) => { const k = member(s.doc, 'System.CPU.Kernel'); const u = member(s.doc, 'System.CPU.User'); return k === undefined || u === undefined ? undefined : (k + u) * pct; } },
    fromDoc('Kernel', 'System.CPU.Kernel', pct),
  ] },
  { name: 'svcrtcpu', title: 'CPU usage of the service', unit: '%', lines: [
    { label: 'Kernel+User', value: (s) => { const k = member(s.doc, 'System.CPU.ProcKernel'); const u = member(s.doc, 'System.CPU.ProcUser'); return k === undefined || u === undefined ? undefined : (k + u) * pct; } },
    fromDoc('Kernel', 'System.CPU.ProcKernel', pct),
  ] },
  { name: 'mem', title: 'Memory use', unit: 'B', lines: [
    // In use = installed minus what the kernel could hand out without swapping (MemAvailable).
    { label: 'Total use', value: (s) => { const a = member(s.doc, 'System.Mem.Available'); return a === undefined ? undefined : Math.max(0, os.totalmem() - a); } },
    fromDoc('Service', 'System.Mem.Svc'),
  ] },
  { name: 'iowait', title: 'CPU time waiting for I/O', unit: '%', lines: [fromDoc('IO wait', 'System.CPU.IOWait', pct)] },
  { name: 'loadavg', title: 'Load average', unit: 'load', lines: [fromDoc('1-minute load', 'System.SystemLoadAverage.Min1')] },
  { name: 'ssockevent', title: 'Client-side socket events', unit: '/s', lines: [fromDoc('Accepted', 'System.ServerSocket.Accepted'), fromDoc('Closed', 'System.ServerSocket.Closed')] },
  { name: 'ssockusage', title: 'Client-side sockets', unit: 'sockets', lines: [fromDoc('Total', 'System.ServerSocket.Total'), fromDoc('Established', 'System.ServerSocket.Established')] },
  { name: 'csockevent', title: 'Origin-side socket events', unit: '/s', lines: [fromDoc('Connected', 'System.ClientSocket.Connected'), fromDoc('Closed', 'System.ClientSocket.Closed')] },
  { name: 'csockusage', title: 'Origin-side sockets', unit: 'sockets', lines: [fromDoc('Total', 'System.ClientSocket.Total'), fromDoc('Established', 'System.ClientSocket.Established')] },
  // ServiceAccess: transactions the service's access control let through and refused, per second.
  { name: 'acldenied', title: 'Clients denied by access control', unit: '/s', lines: [fromDoc('Denied', 'System.ServiceAccess.Deny')] },
  { name: 'eq', title: 'Event queue (event-loop delay)', unit: 'ms', lines: [fromDoc('EQ', 'System.EQ', 0.01)] },
  { name: 'wf2w', title: 'Files waiting to be written', unit: 'files', lines: [fromDoc('Waiting', 'System.WaitingFiles2Write')] },
  { name: 'urlrewrite', title: 'URL rewrites', unit: '/s', lines: [fromDoc('Rewritten', 'System.URLRewrite')] },
  { name: 'tcpsocket', title: 'TCP sockets of the machine', unit: 'sockets', lines: [fromDoc('Established', 'System.TCPSocket.Established'), fromDoc('Time-wait', 'System.TCPSocket.Timewait'), fromDoc('Orphan', 'System.TCPSocket.Orphan')] },
];

export const VHOST_RESOURCES: readonly ResourceDef[] = [
  { name: 'hitratio', title: 'Hit ratio', unit: '%', lines: [
    mean('Request hit ratio', (r) => hitResults(r) * 100, requests),
    // Negative when the origin sent more than the clients took (document 1).
    mean('Byte hit ratio', (r) => (clientOut(r) - originIn(r)) * 100, clientOut),
  ] },
  { name: 'mem', title: 'Content in memory', unit: 'B', lines: [fromDoc('Memory', 'Memory')] },
  { name: 'wf2d', title: 'Files waiting for deletion', unit: 'files', lines: [fromDoc('Waiting', 'WaitingFiles2Delete')] },
  { name: 'client_httpreq_bypass', title: 'Requests bypassed to the origin', unit: '/s', lines: [fromDoc('Bypassed', 'ClientHttpReqBypass')] },
  { name: 'client_httpreq_denied', title: 'Requests denied', unit: '/s', lines: [rate('Denied', results('TCP_DENIED'))] },
  { name: 'client_http_session', title: 'Client sessions', unit: 'sessions', lines: [fromDoc('All', 'ClientSession'), fromDoc('Transferring', 'ClientActiveSession')] },
  { name: 'client_traffic', title: 'Client traffic', unit: 'B/s', lines: [rate('Inbound', fields('requestHeadBytes', 'requestBodyBytes')), rate('Outbound', clientOut)] },
  { name: 'client_http_res', title: 'Client responses', unit: '/s', lines: [rate('Responses', answered), rate('Requests', requests)] },
  { name: 'client_http_res_complete', title: 'Completed client responses', unit: '/s', lines: [
    rate('Completed', (r) => requests(r) - fields('incomplete')(r)), rate('Requests', requests),
  ] },
  { name: 'client_http_res_time1', title: 'Client response time', unit: 'ms', lines: [mean('First byte', fields('firstByteMs'), answered)] },
  { name: 'client_http_res_time2', title: 'Client transaction time', unit: 'ms', lines: [mean('Complete', fields('totalMs'), requests)] },
  { name: 'client_traffic_ssl', title: 'Client TLS traffic', unit: 'B/s', lines: [
    { label: 'Inbound', value: (s) => { const t = rootTraffic(s.doc); return t === undefined ? undefined : member(t, 'SSL.RecvSize'); } },
    { label: 'Outbound', value: (s) => { const t = rootTraffic(s.doc); return t === undefined ? undefined : member(t, 'SSL.SendSize'); } },
  ] },
  { name: 'origin_http_session', title: 'Origin sessions', unit: 'sessions', lines: [fromDoc('All', 'OriginSession'), fromDoc('Transferring', 'OriginActiveSession')] },
  { name: 'origin_traffic', title: 'Origin traffic', unit: 'B/s', lines: [rate('Inbound', originIn), rate('Outbound', fields('originBytesSent'))] },
  { name: 'origin_http_res', title: 'Origin responses', unit: '/s', lines: [rate('Responses', originAnswered), rate('Requests', originRequests)] },
  { name: 'origin_http_res_complete', title: 'Completed origin responses', unit: '/s', lines: [
    rate('Completed', (r) => originRequests(r) - fields('originErrors')(r)), rate('Requests', originRequests),
  ] },
  { name: 'origin_http_res_time1', title: 'Origin response time', unit: 'ms', lines: [mean('First byte', fields('originFirstByteMs'), originAnswered)] },
  { name: 'origin_http_res_time2', title: 'Origin transaction time', unit: 'ms', lines: [mean('Complete', fields('originCompleteMs'), originRequests)] },
  { name: 'filecount', title: 'Cached files', unit: 'files', lines: [fromDoc('Total', 'FileTotal'), fromDoc('Instances', 'FileInstance'), fromDoc('Open', 'FileOpened')] },
  { name: 'client_http_res_detail', title: 'Client responses by status class', unit: '/s', lines: [
    rate('2xx', fields('responses2xx')), rate('3xx', fields('responses3xx')), rate('4xx', fields('responses4xx')), rate('5xx', fields('responses5xx')),
  ] },
  { name: 'client_http_res_hit', title: 'Client requests by cache result', unit: '/s', lines: [
    rate('Hit', results('TCP_HIT', 'TCP_IMS_HIT')),
    rate('Miss', results('TCP_MISS', 'TCP_REFRESH_MISS', 'TCP_CLIENT_REFRESH_MISS')),
    rate('Refresh hit', results('TCP_REFRESH_HIT', 'TCP_REF_FAIL_HIT')),
    rate('Negative/redirect hit', results('TCP_NEGATIVE_HIT', 'TCP_REDIRECT_HIT')),
    rate('Other', results('TCP_DENIED', 'TCP_ERROR', 'TCP_NONE', 'TCP_RATE_LIMITED', 'TCP_DENY')),
  ] },
  { name: 'origin_http_res_detail', title: 'Origin responses by status class', unit: '/s', lines: [
    rate('2xx', fields('originResponses2xx')), rate('3xx', fields('originResponses3xx')), rate('4xx', fields('originResponses4xx')),
    rate('5xx', fields('originResponses5xx')), rate('No answer', fields('originUnanswered')),
  ] },
];

/**
 * Where each resource's lines sit in a scope's flat accumulator row: [numerator, denominator]
 * per line, then one Peak per resource.
 */
export interface Layout {
  resources: readonly ResourceDef[];
  /** Index of each resource's first line (in lines, not in numbers). */
  firstLine: Map<string, number>;
  lineCount: number;
  /** Numbers per row: 2 per line, 1 Peak per resource. */
  width: number;
  /** Changes when the table changes: stored rows of another layout are not read. */
  signature: string;
}

function layoutOf(resources: readonly ResourceDef[]): Layout {
  const firstLine = new Map<string, number>();
  let n = 0;
  for (const r of resources) { firstLine.set(r.name, n); n += r.lines.length; }
  const signature = resources.map((r) => `${r.name}:${r.lines.map((l) => l.label).join(',')}`).join(';');
  return { resources, firstLine, lineCount: n, width: 2 * n + resources.length, signature };
}

export const GLOBAL_LAYOUT = layoutOf(GLOBAL_RESOURCES);
export const VHOST_LAYOUT = layoutOf(VHOST_RESOURCES);
