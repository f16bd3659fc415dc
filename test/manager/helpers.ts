// Shared by the management API tests: a validated setting, a fake RT bridge (the boundary the
// primary implements), a started API on free ports, and a client that binds its own loopback
// source address so one test can call as several different callers.
import http from 'node:http';
import https from 'node:https';
import { ManagementApi, RtBridgeError, type OriginStatus, type RtBridge } from '../../lib/manager/index.js';
import { parseSetting } from '../../lib/setting/load.js';
import type { Setting } from '../../lib/setting/types.js';
import { freePort } from '../helpers/ports.js';

export const VERSION = '0.1.0-test';

/** A setting through the real loader; `api` members are merged into env.management.api. */
export function makeSetting(api: Record<string, unknown> = {}, env: Record<string, unknown> = {}): Setting {
  const s = parseSetting({ env: { home: '/tmp', ...env, management: { api } } });
  return s;
}

export interface FakeRt extends RtBridge {
  up: boolean;
  hosts: string[];
  resets: Array<string | undefined>;
}

export function fakeRt(): FakeRt {
  const rt: FakeRt = {
    up: true,
    hosts: ['a.example.com', 'b.example.com'],
    resets: [],
    running: () => rt.up,
    vhosts: () => [...rt.hosts],
    originStatus: async (vhost?: string): Promise<OriginStatus[]> => {
      if (!rt.up) throw new RtBridgeError('RT_NOT_RUNNING', 'RT not running');
      return rt.hosts.filter((h) => vhost === undefined || h === vhost).map((h) => ({
        VirtualHost: h,
        Address: [{ '10.0.0.1:80': 'Active' }],
        Address2: [{ 'origin2.example.com': 'Inactive' }],
        ActiveIP: [{ '10.0.0.1': 0 }],
        InactiveIP: [{ '192.0.2.7': 300 }],
      }));
    },
    resetOrigin: async (vhost?: string) => {
      rt.resets.push(vhost);
    },
  };
  return rt;
}

/** Starts the real API on a free plain port (the setting's port is replaced). */
export async function startApi(setting: Setting, rt: RtBridge = fakeRt()): Promise<{ api: ManagementApi; port: number; setting: Setting }> {
  const port = await freePort();
  setting.env.management.api.port = port;
  const api = new ManagementApi({ getSetting: () => setting, version: VERSION, rt, host: '127.0.0.1' });
  await api.start();
  return { api, port, setting };
}

export interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  json: Record<string, unknown>;
}

export interface CallOptions {
  /** Source address of the client socket (any 127/8 address works on Linux loopback). */
  from?: string;
  method?: string;
  tls?: { ca: Buffer; maxVersion?: 'TLSv1.2' | 'TLSv1.3' };
  host?: string;
}

export function call(port: number, path: string, o: CallOptions = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const common = {
      host: o.host ?? '127.0.0.1',
      port,
      path,
      method: o.method ?? 'GET',
      localAddress: o.from ?? '127.0.0.1',
      agent: false as const,
    };
    const onRes = (res: http.IncomingMessage): void => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => {
        let json: Record<string, unknown> = {};
        try {
          json = JSON.parse(text) as Record<string, unknown>;
        } catch { /* not JSON */ }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
      });
    };
    const req = o.tls
      ? https.request({ ...common, ca: o.tls.ca, servername: 'localhost', maxVersion: o.tls.maxVersion }, onRes)
      : http.request(common, onRes);
    req.on('error', reject);
    req.end();
  });
}
