// ManagementApi: the management HTTP API of the primary. The plain port
// (env.management.api.port) runs on node:http, the TLS port (https.options.listen) on
// node:https; both feed one Dispatcher (node-server.ts says why not hyper-express).
import type https from 'node:https';
import type { AddressInfo } from 'node:net';
import { parseListen } from '../setting/schema/formats.js';
import type { ManagementApi as ManagementApiSetting, Setting } from '../setting/types.js';
import { AccessControl } from '../access/access.js';
import { compileAddress, isLoopbackRange } from '../access/ip.js';
import { listenPlain, type PlainServer } from './plain.js';
import { Dispatcher, type Route } from './router.js';
import { allRoutes } from './routes/index.js';
import { createTlsServer, tlsOptions } from './tls.js';
import type { RtBridge } from './types.js';

interface ManagementApiOptions {
  /** The running, validated setting; read on every request that needs it. */
  getSetting: () => Setting;
  /** Product version, the `version` of every envelope and `ProductVer` of hwinfo. */
  version: string;
  rt: RtBridge;
  /** Address the plain port binds; by default it follows the allowList (see plainHost). */
  host?: string;
  /**
   * Routes of the groups that need services of their own (`/setting`, `/get`, the purge family
   * ...): each group's factory closes over its service and the primary hands the routes in.
   */
  extraRoutes?: Route[];
}

/**
 * Where the plain port listens: an allowList that admits only loopback addresses (or nobody)
 * could let in no one from another interface, so the port stays on 127.0.0.1; otherwise every
 * IPv4 interface. The allowList is an env member, fixed until the next start, so the address
 * chosen at start stays right.
 */
function plainHost(api: Pick<ManagementApiSetting, 'allowList'>): string {
  const entries = api.allowList ?? [];
  return entries.every((e) => isLoopbackRange(compileAddress(e.addr))) ? '127.0.0.1' : '0.0.0.0';
}

export class ManagementApi {
  private readonly dispatcher: Dispatcher;
  private plain: PlainServer | undefined;
  private tlsServer: https.Server | undefined;

  /** Management requests the ACL let through and refused since the start. */
  get managementAccess(): { Allow: number; Deny: number } {
    return this.dispatcher.managementAccess;
  }

  constructor(private readonly opts: ManagementApiOptions) {
    this.dispatcher = new Dispatcher([...allRoutes(), ...(opts.extraRoutes ?? [])], {
      setting: () => opts.getSetting(),
      version: opts.version,
      rt: opts.rt,
    });
  }

  /** Port of the plain listener, undefined when it is closed (enableHttp false) or not started. */
  get httpPort(): number | undefined {
    return this.plain?.port;
  }

  /** Address the plain listener is bound to, undefined when it is closed. */
  get httpHost(): string | undefined {
    return this.plain?.host;
  }

  get httpsPort(): number | undefined {
    return (this.tlsServer?.address() as AddressInfo | null)?.port;
  }

  /**
   * Opens the ports of the current setting. Throws, with nothing left listening, when the TLS
   * port would share the plain port, a certificate cannot be loaded or a port cannot be bound.
   */
  async start(): Promise<void> {
    if (this.plain !== undefined || this.tlsServer !== undefined) throw new Error('management API already started');
    const setting = this.opts.getSetting();
    const api = setting.env.management.api;
    this.applySetting(setting);

    const h = api.https;
    const enableHttp = h?.options.enableHttp ?? true;
    let tlsListen: { host: string | null; port: number } | undefined;
    if (h !== undefined) {
      const raw = h.options.listen;
      const parsed = raw === undefined ? undefined : parseListen(raw);
      if (!parsed) {
        throw new Error(`env.management.api.https.options.listen must be IP:Port for the TLS management port (got ${JSON.stringify(raw)})`);
      }
      if (parsed.port === api.port && enableHttp) {
        throw new Error(
          `env.management.api.https.options.listen port ${parsed.port} is env.management.api.port; set enableHttp to false or use another port`,
        );
      }
      tlsListen = parsed;
    }
    try {
      if (h !== undefined && tlsListen !== undefined) {
        const server = createTlsServer(await tlsOptions(h, setting.env.home), this.dispatcher, this.opts.version);
        const { host, port } = tlsListen;
        await new Promise<void>((resolve, reject) => {
          server.once('error', (err) => reject(new Error(`management TLS port cannot listen on ${host ?? '*'}:${port}: ${err.message}`)));
          server.listen(port, host ?? undefined, () => resolve());
        });
        this.tlsServer = server;
      }
      if (enableHttp) this.plain = await listenPlain(this.dispatcher, this.opts.version, this.opts.host ?? plainHost(api), api.port);
    } catch (err) {
      await this.close();
      throw err;
    }
  }

  /**
   * Takes the allowList and roles of a newly applied setting at once. Ports and TLS are `env`
   * members, which take effect at the next start (document 2: env changes need a restart).
   * Throws on an allowList address it cannot compile, keeping the previous rules.
   */
  applySetting(setting: Setting): void {
    this.dispatcher.setAccess(new AccessControl(setting.env.management.api));
  }

  async close(): Promise<void> {
    const plain = this.plain;
    this.plain = undefined;
    const server = this.tlsServer;
    this.tlsServer = undefined;
    await plain?.close();
    if (server !== undefined) {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    }
  }
}
