// Free ports for test servers, checked by binding them. They are picked below the kernel's
// ephemeral range: a server that starts a second after its port was picked (the real server
// does) must not find it taken by an outgoing connection of another test meanwhile.
// `consecutive` finds a free run of ports for a worker cluster's internal ports (baseHostingPort + i).
import net from 'node:net';

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
    for (let i = 0; i < count && ok; i++) ok = await isFree(base + i, host);
    if (ok) return base;
  }
  throw new Error('no run of free ports found');
}
