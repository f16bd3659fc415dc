// License routes (document 1): `GET /get/license` and the replacement flow of
// `/setting/license/update`. Document 1 answers every outcome of the update with 200
// `application/json` and the bare bodies `{key, diff}` / `{message}` (no envelope), so the
// handlers return those as they are; the work is LicenseService's.
import { parseMultipart } from '../../lifecycle/multipart.js';
import type { LicenseService, UpdateOutcome } from '../../license/service.js';
import { jsonReply, ok } from '../envelope.js';
import type { Route } from '../router.js';
import type { ApiReply, ApiRequest } from '../types.js';

const UPDATE = '/setting/license/update';
/** Document 1 names the multipart part of the license. */
const PART = 'file';

function outcome(o: UpdateOutcome): ApiReply {
  return jsonReply(200, o);
}

/** The license text of the request, or the `Cannot parse license - ...` detail why there is none. */
async function licenseText(req: ApiRequest): Promise<{ xml: string } | { error: string }> {
  const ct = req.headers['content-type'] ?? '';
  const body = await req.body();
  if (/^multipart\/form-data\b/i.test(ct)) {
    let part;
    try {
      part = (await parseMultipart(body, ct)).find((p) => p.name === PART);
    } catch (err) {
      return { error: `malformed multipart body: ${(err as Error).message}` };
    }
    if (part === undefined) return { error: `no multipart part named "${PART}"` };
    return { xml: part.data.toString('utf8') };
  }
  if (/^(application|text)\/xml\b/i.test(ct) || /^application\/[\w.+-]+\+xml\b/i.test(ct)) return { xml: body.toString('utf8') };
  return { error: `send the license as multipart/form-data (part "${PART}") or as an application/xml body, not "${ct || 'no Content-Type'}"` };
}

/** `state`: the node State of the statistics (Emergency included); the license's alone by default. */
export function licenseRoutes(license: LicenseService, state: () => string = () => license.state()): Route[] {
  return [
    {
      method: 'GET',
      path: '/get/license',
      name: 'license',
      group: 'query',
      // `State` (ours): the service State of the monitoring statistics (document 1): Healthy,
      // Inactive when the license is not valid, Emergency (lib/stats/service.ts), so an operator
      // sees what an expired license means right here.
      handler: async (_req, ctx) => ok(ctx.version, 'license', 'query', { ...license.current(), State: state() }),
    },
    {
      method: 'POST',
      path: UPDATE,
      name: UPDATE,
      group: 'operation',
      handler: async (req) => {
        const got = await licenseText(req);
        if ('error' in got) return outcome({ message: `Cannot parse license - ${got.error}` });
        const force = (req.query.get('force') ?? '').toLowerCase() === 'true';
        return applying(() => license.update(got.xml, force));
      },
    },
    {
      method: 'GET',
      path: UPDATE,
      name: UPDATE,
      group: 'operation',
      handler: async (req) => {
        const key = req.query.get('confirm');
        if (key === null || key === '') return outcome({ message: 'confirm=<key> is required (the key of a license update)' });
        return applying(() => license.confirm(key));
      },
    },
  ];
}

/** A license that could not be written stays uninstalled; the caller learns why (500, same body shape). */
async function applying(run: () => Promise<UpdateOutcome>): Promise<ApiReply> {
  try {
    return outcome(await run());
  } catch (err) {
    return jsonReply(500, { message: `Cannot install license - ${(err as Error).message}` });
  }
}
