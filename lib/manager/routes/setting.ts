// `/setting` routes (document 1): deployment, upload / import / validate, the running file and
// package, history and restore, virtual hosts. The work is SettingLifecycle's; these handlers
// only map requests and outcomes to the envelopes and status codes of document 1.
import {
  createVhost, deleteVhost, editVhost, getVhost, LoadFailure, VhostError, type Applied, type SettingLifecycle,
} from '../../lifecycle/index.js';
import { isCoded } from '../../errors/codes.js';
import { fail, jsonReply, ok, STATUS } from '../envelope.js';
import type { Route } from '../router.js';
import type { ApiReply, ApiRequest } from '../types.js';

const UPLOAD_FAILED = 500;

/** 411 / 415: the upload is refused before its body is looked at. */
function uploadHeaders(req: ApiRequest, version: string, method: string): ApiReply | undefined {
  if (req.headers['content-length'] === undefined) {
    return fail(411, version, method, 'upload', 'Content-Length required', { error: 1 });
  }
  const ct = req.headers['content-type'] ?? '';
  if (!/^(multipart\/form-data|application\/json)\b/i.test(ct)) {
    return fail(415, version, method, 'upload', 'Content-Type must be multipart/form-data or application/json', { error: 1 });
  }
  return undefined;
}

function uploadRoute(path: string, apply: boolean, lc: SettingLifecycle): Route {
  return {
    method: 'POST',
    path,
    name: path,
    group: 'upload',
    handler: async (req, ctx) => {
      const refused = uploadHeaders(req, ctx.version, path);
      if (refused !== undefined) return refused;
      try {
        const r = await lc.upload(req.headers['content-type']!, await req.body(), apply);
        const warnings = r.warnings === undefined ? {} : { warnings: r.warnings };
        return ok(ctx.version, path, 'upload', { applied: apply, artifact: r.artifact, restartPending: r.restartPending, ...warnings }, { error: 0 });
      } catch (err) {
        if (!(err instanceof LoadFailure)) throw err;
        return fail(UPLOAD_FAILED, ctx.version, path, 'upload', err.message, refusal(err));
      }
    },
  };
}

/**
 * `restartPending`: the env paths that wait for a restart (applied is true for the rest);
 * `warnings` as an upload's.
 */
function applied(r: Applied): Record<string, unknown> {
  return { applied: true, artifact: r.artifact, restartPending: r.restartPending, changedHosts: r.changedHosts, ...(r.warnings === undefined ? {} : { warnings: r.warnings }) };
}

/** A refusal's members beside document 1's `error` and `reason`: each refused member at its JSON path. */
function refusal(err: LoadFailure): Record<string, unknown> {
  return { error: err.code, ...(err.issues === undefined ? {} : { issues: err.issues }) };
}

function vhostFailure(err: unknown, version: string, method: string): ApiReply {
  if (err instanceof VhostError || isCoded(err, 'VHOST_NOT_FOUND')) return fail(err.status, version, method, 'upload', err.message);
  throw err;
}

async function jsonBody(req: ApiRequest): Promise<unknown> {
  if (!/^application\/json\b/i.test(req.headers['content-type'] ?? '')) throw new VhostError(400, 'Content-Type must be application/json');
  try {
    return JSON.parse((await req.body()).toString('utf8'));
  } catch (err) {
    throw new VhostError(400, `body is not JSON: ${(err as Error).message}`);
  }
}

function vhostRoute(method: Route['method'], name: string, run: (req: ApiRequest, host: string | undefined) => Promise<unknown>, exact = false): Route {
  return {
    method,
    path: exact ? '/setting/vhosts' : '/setting/vhosts/',
    prefix: !exact,
    name,
    group: 'upload',
    handler: async (req, ctx) => {
      try {
        const host = exact ? undefined : req.params.rest;
        return ok(ctx.version, name, 'upload', await run(req, host === '' ? undefined : host));
      } catch (err) {
        return vhostFailure(err, ctx.version, name);
      }
    },
  };
}

// The routes in the order they were always listed (routes of one path are tried in it); each is
// built by a function of its own below.
export function settingRoutes(lc: SettingLifecycle): Route[] {
  return [
    deployLocalRoute(lc),
    uploadRoute('/setting/upload', true, lc),
    uploadRoute('/setting/import', true, lc),
    uploadRoute('/setting/validate', false, lc),
    runningFileRoute(lc),
    downloadRoute(lc),
    deployBackupRoute(lc),
    historyRoute(lc),
    restoreRoute(lc),
    ...vhostRoutes(lc),
  ];
}

function deployLocalRoute(lc: SettingLifecycle): Route {
  return {
    method: 'GET',
    path: '/setting/deploy/local',
    name: '/setting/deploy/local',
    group: 'deploy',
    handler: async (_req, ctx) => {
      try {
        return ok(ctx.version, '/setting/deploy/local', 'deploy', applied(await lc.deployLocal()));
      } catch (err) {
        if (!(err instanceof LoadFailure)) throw err;
        return fail(200, ctx.version, '/setting/deploy/local', 'deploy', err.message, refusal(err));
      }
    },
  };
}

/** The running setting file as it was deployed, byte for byte. */
function runningFileRoute(lc: SettingLifecycle): Route {
  return {
    method: 'GET',
    path: '/setting/setting.json',
    name: '/setting/setting.json',
    group: 'query',
    handler: async (_req, ctx) => {
      const text = lc.runningRaw();
      if (text === undefined) return fail(404, ctx.version, '/setting/setting.json', 'query', 'no setting loaded yet');
      return { status: 200, headers: { 'content-type': 'application/json; charset=utf-8' }, body: Buffer.from(text) };
    },
  };
}

/** The package of the running setting from the backup history. */
function downloadRoute(lc: SettingLifecycle): Route {
  return {
    method: 'GET',
    path: '/setting/download',
    name: '/setting/download',
    group: 'query',
    handler: async (_req, ctx) => {
      const p = await lc.loadedPackage();
      const m = '/setting/download';
      if (p.kind === 'disabled') return fail(406, ctx.version, m, 'query', 'setting backup is disabled (meta.history.retention.count is 0)');
      if (p.kind === 'none') return fail(500, ctx.version, m, 'query', 'no setting backup history');
      if (p.kind === 'missing') return fail(404, ctx.version, m, 'query', 'the backup record exists but its package file is missing');
      return {
        status: 200,
        headers: { 'content-type': 'application/x-compressed', 'content-disposition': `attachment; filename="${p.file}"` },
        body: p.data,
      };
    },
  };
}

function deployBackupRoute(lc: SettingLifecycle): Route {
  return {
    method: 'GET',
    path: '/setting/deploy/backup',
    name: '/setting/deploy/backup',
    group: 'deploy',
    handler: async (_req, ctx) => {
      try {
        return ok(ctx.version, '/setting/deploy/backup', 'deploy', await lc.backup());
      } catch (err) {
        return fail(200, ctx.version, '/setting/deploy/backup', 'deploy', (err as Error).message);
      }
    },
  };
}

function historyRoute(lc: SettingLifecycle): Route {
  return {
    method: 'GET',
    path: '/setting/history',
    name: '/setting/history',
    group: 'query',
    // Document 1 shows this answer without the envelope.
    handler: async () => jsonReply(200, { history: await lc.historyEntries() }),
  };
}

function restoreRoute(lc: SettingLifecycle): Route {
  return {
    method: 'GET',
    path: '/setting/restore/',
    prefix: true,
    name: '/setting/restore',
    group: 'deploy',
    handler: async (req, ctx) => {
      const r = await lc.restore(req.params.rest ?? '');
      return jsonReply(200, {
        version: ctx.version,
        method: '/setting/restore',
        status: r.code === 0 ? STATUS.deploy.ok : STATUS.deploy.fail,
        result: r.code,
        reason: r.reason,
        ...(r.applied === undefined ? {} : { artifact: r.applied.artifact }),
      });
    },
  };
}

/** `/setting/vhosts/*`: without a host name (the exact paths) only create has a meaning. */
function vhostRoutes(lc: SettingLifecycle): Route[] {
  const missingName = async (): Promise<never> => {
    throw new VhostError(400, 'virtual host name missing');
  };
  return [
    vhostRoute('POST', '/setting/vhosts/create', async (req) => {
      await createVhost(lc, await jsonBody(req));
      return 'created';
    }, true),
    vhostRoute('GET', '/setting/vhosts/get', missingName, true),
    vhostRoute('PUT', '/setting/vhosts/edit', missingName, true),
    vhostRoute('DELETE', '/setting/vhosts/delete', missingName, true),
    vhostRoute('GET', '/setting/vhosts/get', async (_req, host) => getVhost(lc, host)),
    vhostRoute('PUT', '/setting/vhosts/edit', async (req, host) => {
      if (host === undefined) throw new VhostError(400, 'virtual host name missing');
      await editVhost(lc, host, await jsonBody(req));
      return 'edited';
    }),
    vhostRoute('DELETE', '/setting/vhosts/delete', async (_req, host) => {
      await deleteVhost(lc, host);
      return 'deleted';
    }),
  ];
}
