// `/monitoring/ssl`: expands an OpenSSL cipher expression with the openssl binary of the
// machine, so the answer is what this machine's OpenSSL makes of it (and matches what a TLS
// listener configured with the same string offers).
import { execFile } from 'node:child_process';
import { ApiError, HTTP } from '../envelope.js';

export interface CipherEntry { Name: string; Ver: string; Kx: string; Au: string; Enc: string; Mac: string }

/** Characters of OpenSSL cipher strings; anything else cannot be a cipher expression. */
const EXPRESSION = /^[A-Za-z0-9!:+\-@=_., ]+$/;

function run(expr: string): Promise<string> {
  return new Promise((resolve, reject) => {
    // No shell; a leading '-' (read as an option) is refused before we get here.
    execFile('openssl', ['ciphers', '-v', expr], { timeout: 5000, maxBuffer: 1 << 20 }, (err, stdout, stderr) => {
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
  const entries = parseCiphers(await run(expr));
  if (entries.length === 0) throw new ApiError(HTTP.badRequest, `invalid CipherSuite "${expr}": no cipher matches`);
  return entries;
}
