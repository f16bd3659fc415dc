// `/monitoring/ssl`: expands an OpenSSL cipher expression as the TLS service ports read it: the
// spec's default expression is mapped to the same safe set (lib/tls/options.ts), TLS 1.3
// names (`TLS_...`) are TLS 1.3 suites as node takes them, and the expression is judged valid
// or not by node's own OpenSSL. The list itself comes from the openssl binary of the machine
// (node has no call that lists a context's suites), the same OpenSSL 3.0 series.
import { execFile } from 'node:child_process';
import tls from 'node:tls';
import { mappedCiphers } from '../../tls/options.js';
import { ApiError, HTTP } from '../envelope.js';

export interface CipherEntry { Name: string; Ver: string; Kx: string; Au: string; Enc: string; Mac: string }

/** Characters of OpenSSL cipher strings; anything else cannot be a cipher expression. */
const EXPRESSION = /^[A-Za-z0-9!:+\-@=_., ]+$/;

/** node's split: `TLS_` names are TLS 1.3 suites (-ciphersuites), the rest the TLS 1.2- list. */
function opensslArgs(expr: string): string[] {
  const parts = expr.split(':');
  const v13 = parts.filter((p) => p.startsWith('TLS_'));
  const rest = parts.filter((p) => !p.startsWith('TLS_')).join(':');
  // Only TLS 1.3 names: node leaves no TLS 1.2 suite; `-s -tls1_3` lists the 1.3 ones alone.
  const v12 = rest === '' ? ['-s', '-tls1_3', 'ALL'] : [rest];
  return ['ciphers', '-v', ...(v13.length > 0 ? ['-ciphersuites', v13.join(':')] : []), ...v12];
}

function run(expr: string): Promise<string> {
  return new Promise((resolve, reject) => {
    // No shell; a leading '-' (read as an option) is refused before we get here.
    execFile('openssl', opensslArgs(expr), { timeout: 5000, maxBuffer: 1 << 20 }, (err, stdout, stderr) => {
      if (err === null) return resolve(stdout);
      const e = err as NodeJS.ErrnoException & { code?: unknown };
      if (e.code === 'ENOENT') return reject(new ApiError(HTTP.internalError, 'openssl is not installed on this machine'));
      const detail = stderr.split('\n').find((l) => l.trim() !== '')?.trim();
      reject(new ApiError(HTTP.badRequest, `invalid CipherSuite "${expr}"${detail ? `: ${detail}` : ''}`));
    });
  });
}

/** Parses `openssl ciphers -v` lines: `NAME VERSION Kx=.. Au=.. Enc=.. Mac=..`. */
export function parseCiphers(text: string): CipherEntry[] {
  const out: CipherEntry[] = [];
  for (const line of text.split('\n')) {
    const cols = line.trim().split(/\s+/);
    if (cols.length < 6) continue;
    const kv = new Map(cols.slice(2).map((c) => [c.slice(0, c.indexOf('=')), c.slice(c.indexOf('=') + 1)]));
    out.push({
      Name: cols[0]!,
      Ver: cols[1]!,
      Kx: kv.get('Kx') ?? '-',
      Au: kv.get('Au') ?? '-',
      Enc: kv.get('Enc') ?? '-',
      Mac: kv.get('Mac') ?? '-',
    });
  }
  return out;
}

export async function expandCiphers(expr: string): Promise<CipherEntry[]> {
  if (expr.length > 2048 || !EXPRESSION.test(expr) || expr.startsWith('-')) {
    throw new ApiError(HTTP.badRequest, `invalid CipherSuite "${expr.slice(0, 100)}": not an OpenSSL cipher expression`);
  }
  const mapped = mappedCiphers(expr);
  try {
    tls.createSecureContext({ ciphers: mapped });
  } catch (err) {
    throw new ApiError(HTTP.badRequest, `invalid CipherSuite "${expr.slice(0, 100)}": ${(err as Error).message}`);
  }
  const entries = parseCiphers(await run(mapped));
  if (entries.length === 0) throw new ApiError(HTTP.badRequest, `invalid CipherSuite "${expr}": no cipher matches`);
  return entries;
}
