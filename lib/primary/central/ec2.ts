// EC2 DescribeInstances through the Query API (Action=DescribeInstances, Version 2016-11-15),
// signed with AWS Signature Version 4 (aws4fetch's signer), pages followed by NextToken. Used by
// the deprecated features.nodelist (cloudAsdk3 connection).
import { AwsV4Signer } from 'aws4fetch';
import { XMLParser } from 'fast-xml-parser';
import type { Credentials } from '../../log/repository/imds.js';
import { call, type InfoLog } from './http.js';

export interface Ec2Connection { credentials: () => Promise<Credentials>; region: string; endpoint?: string | undefined }

interface Instance { id: string; stateCode: number; stateName: string; privateIp: string | undefined; tags: Map<string, string> }

const API_VERSION = '2016-11-15';
/** Pages of one listing at most (1000 instances a page). */
const MAX_PAGES = 100;

const parser = new XMLParser({ ignoreAttributes: true, parseTagValue: false, isArray: (name) => name === 'item' });

type Node = Record<string, unknown>;
const items = (n: unknown): Node[] => ((n as { item?: Node[] } | undefined)?.item ?? []);

function instancesOf(xml: string): { list: Instance[]; next: string | undefined } {
  const doc = parser.parse(xml) as Node;
  const root = doc.DescribeInstancesResponse as Node | undefined;
  if (root === undefined) {
    const code = /<Code>([^<]*)<\/Code>/.exec(xml)?.[1];
    throw new Error(`not a DescribeInstances answer${code === undefined ? '' : `: ${code}`}`);
  }
  const list: Instance[] = [];
  for (const r of items(root.reservationSet)) {
    for (const i of items(r.instancesSet)) {
      const state = (i.instanceState ?? {}) as Node;
      const tags = new Map(items(i.tagSet).map((t) => [String(t.key ?? ''), String(t.value ?? '')]));
      const ip = i.privateIpAddress;
      list.push({
        id: String(i.instanceId ?? ''), stateCode: Number(state.code), stateName: String(state.name ?? ''),
        privateIp: typeof ip === 'string' && ip !== '' ? ip : undefined, tags,
      });
    }
  }
  const next = root.nextToken;
  return { list, next: typeof next === 'string' && next !== '' ? next : undefined };
}

/** Every instance the credentials may list in the region (running ones: the state filter). */
export async function describeInstances(c: Ec2Connection, timeoutMs: number, log: InfoLog): Promise<Instance[]> {
  const url = c.endpoint ?? `https://ec2.${c.region}.amazonaws.com/`;
  const out: Instance[] = [];
  let token: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const form = new URLSearchParams({ Action: 'DescribeInstances', Version: API_VERSION, 'Filter.1.Name': 'instance-state-name', 'Filter.1.Value.1': 'running' });
    if (token !== undefined) form.set('NextToken', token);
    const body = form.toString();
    const creds = await c.credentials();
    const signer = new AwsV4Signer({
      method: 'POST', url, service: 'ec2', region: c.region, body,
      headers: { 'content-type': 'application/x-www-form-urlencoded; charset=utf-8' },
      accessKeyId: creds.accessKeyId, secretAccessKey: creds.secretAccessKey,
      ...(creds.sessionToken === undefined ? {} : { sessionToken: creds.sessionToken }),
    });
    const signed = await signer.sign();
    const r = await call({
      method: 'POST', url, timeoutMs, headers: Object.fromEntries(signed.headers.entries()), body, purpose: 'EC2 DescribeInstances',
    }, log);
    const text = r.body.toString('utf8');
    if (r.status !== 200) throw new Error(`DescribeInstances: HTTP ${r.status} ${/<Code>([^<]*)<\/Code>/.exec(text)?.[1] ?? ''}`.trim());
    const { list, next } = instancesOf(text);
    out.push(...list);
    if (next === undefined) return out;
    token = next;
  }
  throw new Error(`DescribeInstances: more than ${MAX_PAGES} pages`);
}

/** `key=value;key2=;`: an instance is taken when one of its tags matches one entry (`key=` matches the key alone). */
export function parseTagFilter(tag: string): { key: string; value: string | undefined }[] {
  return tag.split(';').map((s) => s.trim()).filter((s) => s !== '').map((s) => {
    const eq = s.indexOf('=');
    if (eq < 0) return { key: s, value: undefined };
    const value = s.slice(eq + 1);
    return { key: s.slice(0, eq), value: value === '' ? undefined : value };
  });
}

/** The private IPs of the running instances (state 16, running) that carry a matching tag. */
export function matchingIps(list: Instance[], filter: ReturnType<typeof parseTagFilter>): string[] {
  const ips = list.filter((i) => i.stateCode === 16 && i.stateName.toLowerCase() === 'running' && i.privateIp !== undefined
    && filter.some((f) => i.tags.has(f.key) && (f.value === undefined || i.tags.get(f.key) === f.value)))
    .map((i) => i.privateIp!);
  return [...new Set(ips)].sort();
}
