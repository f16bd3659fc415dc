// Free ports for test servers, checked by binding them. They are picked below the kernel's
// ephemeral range: a server that starts a second after its port was picked (the real server
// does) must not find it taken by an outgoing connection of another test meanwhile.
// `consecutive` finds a free run of ports for a worker cluster's internal ports (baseHostingPort + i).
//
// A port checked free is still free for anyone until the server binds it, which can be a second
// later: two test files run side by side could pick the same one in that window (seen: a worker's
// internal port taken, EADDRINUSE). So each port handed out is also reserved, machine-wide, by a
// file named after it that holds the test process's pid (created exclusively: one process wins),
// until that process exits; a file whose process is gone (killed) is taken over.
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

const RESERVED_DIR = path.join(os.tmpdir(), 'svc-test-ports');
const mine = new Set<number>();

export function freePort(host = '127.0.0.1'): Promise<number> {
  return consecutiveFreePorts(1, host);
}

export function isFree(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.once('error', () => resolve(false));
    s.listen(port, host, () => s.close(() => resolve(true)));
  });
}

/** Below the kernel's ephemeral range (32768-60999 by default). */
const RUN_LOW = 12000;
const RUN_HIGH = 32000;

export async function consecutiveFreePorts(count: number, host = '127.0.0.1'): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const base = RUN_LOW + Math.floor(Math.random() * (RUN_HIGH - RUN_LOW - count));
    let ok = true;
    for (let i = 0; i < count && ok; i++) ok = !mine.has(base + i) && await isFree(base + i, host);
    if (ok && reserveRun(base, count)) return base;
  }
  throw new Error('no run of free ports found');
}

/** Reserves ports [base, base + count) for this process, all or none. */
function reserveRun(base: number, count: number): boolean {
  const got: number[] = [];
  for (let i = 0; i < count; i++) {
    if (!reserve(base + i)) {
      for (const p of got) release(p);
      return false;
    }
    got.push(base + i);
  }
  return true;
}

let cleanupSet = false;

function reserve(port: number): boolean {
  if (!cleanupSet) {
    cleanupSet = true;
    fs.mkdirSync(RESERVED_DIR, { recursive: true });
    process.once('exit', () => { for (const p of mine) release(p); });
  }
  const file = path.join(RESERVED_DIR, String(port));
  // Written whole under a name of its own, then linked: the reservation appears with its pid.
  const tmp = path.join(RESERVED_DIR, `.${process.pid}-${port}`);
  fs.writeFileSync(tmp, String(process.pid));
  try {
    for (let tries = 0; tries < 2; tries++) {
      try {
        fs.linkSync(tmp, file);
        mine.add(port);
        return true;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || holderAlive(file)) return false;
        fs.rmSync(file, { force: true }); // its process is gone: the port is free to take
      }
    }
    return false;
  } finally {
    fs.rmSync(tmp, { force: true });
  }
}

function holderAlive(file: string): boolean {
  let pid: number;
  try {
    pid = Number(fs.readFileSync(file, 'utf8'));
  } catch {
    return false;
  }
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function release(port: number): void {
  mine.delete(port);
  fs.rmSync(path.join(RESERVED_DIR, String(port)), { force: true });
}
