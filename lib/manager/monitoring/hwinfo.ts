// `/monitoring/hwinfo`: what the machine is, read from /proc and /sys (Linux). Every read is
// asynchronous and every missing source gives '-' rather than an error, because containers and
// virtual machines hide different parts of /sys.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

export interface HwInfo {
  OS: string;
  Issue: string;
  ProductVer: string;
  /** Total memory in bytes. */
  Memory: string;
  CPU: { ProcCount: number; Model: string; MHz: string; Cache: string; 'AES-NI': 'Supported' | 'Not supported' };
  NIC: Array<{ Dev: string; Model: string; IP: string; MAC: string }>;
  /** Total and Usage in bytes, of the file systems mounted from the disk; '-' when none is mounted. */
  Disk: Array<{ Dev: string; Model: string; Total: string; Usage: string }>;
}

async function read(file: string): Promise<string | undefined> {
  try {
    return await fs.readFile(file, 'utf8');
  } catch {
    return undefined;
  }
}

/** `key : value` lines of /proc/cpuinfo and /proc/meminfo; the first occurrence of a key wins. */
function fields(text: string): Map<string, string> {
  const m = new Map<string, string>();
  for (const line of text.split('\n')) {
    const i = line.indexOf(':');
    if (i < 0) continue;
    const k = line.slice(0, i).trim();
    if (!m.has(k)) m.set(k, line.slice(i + 1).trim());
  }
  return m;
}

async function cpuInfo(): Promise<HwInfo['CPU']> {
  const text = (await read('/proc/cpuinfo')) ?? '';
  const f = fields(text);
  const cpus = os.cpus();
  const procCount = text.split('\n').filter((l) => /^processor\s*:/.test(l)).length || cpus.length;
  // x86 lists `flags`, ARM `Features` (where AES is also `aes`).
  const flags = (f.get('flags') ?? f.get('Features') ?? '').split(/\s+/);
  const mhz = f.get('cpu MHz') ?? (cpus[0]?.speed ? String(cpus[0].speed) : '-');
  return {
    ProcCount: procCount,
    Model: f.get('model name') ?? f.get('Hardware') ?? cpus[0]?.model ?? '-',
    MHz: mhz,
    Cache: f.get('cache size') ?? '-',
    'AES-NI': flags.includes('aes') ? 'Supported' : 'Not supported',
  };
}

async function memoryBytes(): Promise<string> {
  const kb = /^(\d+)\s*kB/.exec(fields((await read('/proc/meminfo')) ?? '').get('MemTotal') ?? '');
  return kb ? String(Number(kb[1]) * 1024) : String(os.totalmem());
}

async function issue(): Promise<string> {
  // /etc/issue carries getty escapes (`\n`, `\l`); they mean nothing here.
  const first = (await read('/etc/issue'))?.split('\n').find((l) => l.trim() !== '');
  const cleaned = first?.replace(/\\[a-zA-Z]/g, '').trim();
  if (cleaned) return cleaned;
  const pretty = /^PRETTY_NAME="?([^"\n]*)"?/m.exec((await read('/etc/os-release')) ?? '');
  return pretty?.[1] || '-';
}

async function nicModel(dev: string): Promise<string> {
  const uevent = await read(`/sys/class/net/${dev}/device/uevent`);
  if (uevent === undefined) return '-';
  const kv = new Map(uevent.split('\n').map((l) => l.split('=', 2) as [string, string]));
  const driver = kv.get('DRIVER');
  const pci = kv.get('PCI_ID');
  return driver ? (pci ? `${driver} (${pci})` : driver) : '-';
}

async function nics(): Promise<HwInfo['NIC']> {
  const ifaces = os.networkInterfaces();
  const out: HwInfo['NIC'] = [];
  for (const [dev, addrs] of Object.entries(ifaces)) {
    if (addrs === undefined || addrs.every((a) => a.internal)) continue;
    const ip = addrs.find((a) => a.family === 'IPv4') ?? addrs[0];
    const mac = (await read(`/sys/class/net/${dev}/address`))?.trim() || addrs[0]?.mac || '-';
    out.push({ Dev: dev, Model: await nicModel(dev), IP: ip?.address ?? '-', MAC: mac });
  }
  return out;
}

/** Whole disks: /sys/block entries that are not loop, RAM or compressed-RAM devices. */
async function blockDevices(): Promise<string[]> {
  try {
    return (await fs.readdir('/sys/block')).filter((d) => !/^(loop|ram|zram)\d*/.test(d)).sort();
  } catch {
    return [];
  }
}

/** First mount point of each device of /proc/mounts (bind mounts repeat a device). */
async function mountsByDevice(): Promise<Map<string, string>> {
  const m = new Map<string, string>();
  for (const line of ((await read('/proc/mounts')) ?? '').split('\n')) {
    const [dev, mnt] = line.split(' ');
    if (dev?.startsWith('/dev/') && mnt !== undefined && !m.has(dev)) m.set(dev.slice(5), mnt.replace(/\\040/g, ' '));
  }
  return m;
}

async function disks(): Promise<HwInfo['Disk']> {
  const mounts = await mountsByDevice();
  const out: HwInfo['Disk'] = [];
  for (const dev of await blockDevices()) {
    let parts: string[] = [];
    try {
      parts = (await fs.readdir(path.join('/sys/block', dev))).filter((p) => p.startsWith(dev));
    } catch { /* no partitions visible */ }
    let total = 0;
    let used = 0;
    let mounted = false;
    for (const name of [dev, ...parts]) {
      const mnt = mounts.get(name);
      if (mnt === undefined) continue;
      try {
        const st = await fs.statfs(mnt);
        total += st.blocks * st.bsize;
        used += (st.blocks - st.bfree) * st.bsize;
        mounted = true;
      } catch { /* mount point not reachable from here */ }
    }
    const model = (await read(`/sys/block/${dev}/device/model`))?.trim() || '-';
    if (!mounted) {
      const sectors = Number((await read(`/sys/block/${dev}/size`))?.trim());
      out.push({ Dev: dev, Model: model, Total: Number.isFinite(sectors) ? String(sectors * 512) : '-', Usage: '-' });
    } else {
      out.push({ Dev: dev, Model: model, Total: String(total), Usage: String(used) });
    }
  }
  return out;
}

export async function hwInfo(productVersion: string): Promise<HwInfo> {
  const [CPU, Memory, Issue, NIC, Disk] = await Promise.all([cpuInfo(), memoryBytes(), issue(), nics(), disks()]);
  return { OS: `${os.type()} ${os.release()}`, Issue, ProductVer: productVersion, Memory, CPU, NIC, Disk };
}
