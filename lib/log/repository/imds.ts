// Instance-role credentials (`#IAMROLE` as a cloudA key) from the instance-metadata service,
// IMDSv2: a session token (PUT /latest/api/token), then the role name and its credentials
// (GET /latest/meta-data/iam/security-credentials/[<role>]). The endpoint is the standard
// 169.254.169.254 unless AWS_EC2_METADATA_SERVICE_ENDPOINT names another (the variable the AWS
// SDKs read; tests point it at a stand-in). Credentials are reused until 5 minutes before they
// expire.
import { request } from 'undici';

export interface Credentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

const TIMEOUT_MS = 3000;
const REFRESH_BEFORE_MS = 5 * 60_000;

function endpoint(): string {
  return (process.env.AWS_EC2_METADATA_SERVICE_ENDPOINT ?? 'http://169.254.169.254').replace(/\/+$/, '');
}

async function call(method: 'GET' | 'PUT', url: string, headers: Record<string, string>): Promise<string> {
  const r = await request(url, { method, headers, headersTimeout: TIMEOUT_MS, bodyTimeout: TIMEOUT_MS });
  const text = await r.body.text();
  if (r.statusCode !== 200) throw new Error(`instance metadata ${method} ${new URL(url).pathname}: HTTP ${r.statusCode}`);
  return text;
}

interface RoleAnswer { Code?: string; AccessKeyId?: string; SecretAccessKey?: string; Token?: string; Expiration?: string }

export class InstanceRole {
  private cached: { creds: Credentials; until: number } | undefined;

  constructor(private readonly now: () => number = Date.now) {}

  async credentials(): Promise<Credentials> {
    if (this.cached !== undefined && this.now() < this.cached.until) return this.cached.creds;
    const base = endpoint();
    const token = await call('PUT', `${base}/latest/api/token`, { 'x-aws-ec2-metadata-token-ttl-seconds': '21600' });
    const h = { 'x-aws-ec2-metadata-token': token };
    const roles = await call('GET', `${base}/latest/meta-data/iam/security-credentials/`, h);
    const role = roles.split('\n').map((s) => s.trim()).find((s) => s !== '');
    if (role === undefined) throw new Error('instance metadata: the instance has no IAM role');
    const a = JSON.parse(await call('GET', `${base}/latest/meta-data/iam/security-credentials/${encodeURIComponent(role)}`, h)) as RoleAnswer;
    if ((a.Code !== undefined && a.Code !== 'Success') || !a.AccessKeyId || !a.SecretAccessKey) {
      throw new Error(`instance metadata: role ${role} gave no credentials (${a.Code ?? 'no Code'})`);
    }
    const creds: Credentials = { accessKeyId: a.AccessKeyId, secretAccessKey: a.SecretAccessKey, ...(a.Token ? { sessionToken: a.Token } : {}) };
    const expires = a.Expiration === undefined ? NaN : Date.parse(a.Expiration);
    this.cached = { creds, until: Number.isNaN(expires) ? this.now() + REFRESH_BEFORE_MS : expires - REFRESH_BEFORE_MS };
    return creds;
  }
}
