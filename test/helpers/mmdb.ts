// A minimal MaxMind DB writer (format spec: https://maxmind.github.io/MaxMind-DB/), for tests that
// need a GeoIP database: an IPv4 tree of 24-bit records, one country map per network, and the
// metadata the readers require. No database is ever downloaded.

type Value = string | number | bigint | Value[] | { [k: string]: Value };

/** Control byte(s) of a field: type (extended types > 7 take a second byte) and size. */
function control(type: number, size: number): Buffer {
  const head: number[] = [];
  let sizeBits: number;
  const extra: number[] = [];
  if (size < 29) sizeBits = size;
  else if (size < 285) { sizeBits = 29; extra.push(size - 29); }
  else { sizeBits = 30; const v = size - 285; extra.push(v >> 8, v & 0xff); }
  if (type <= 7) head.push((type << 5) | sizeBits);
  else head.push(sizeBits, type - 7);
  return Buffer.from([...head, ...extra]);
}

function uintBytes(n: bigint): number[] {
  const out: number[] = [];
  while (n > 0n) { out.unshift(Number(n & 0xffn)); n >>= 8n; }
  return out;
}

function encode(v: Value, uintType?: number): Buffer {
  if (typeof v === 'string') {
    const b = Buffer.from(v, 'utf8');
    return Buffer.concat([control(2, b.length), b]);
  }
  if (typeof v === 'number' || typeof v === 'bigint') {
    const bytes = uintBytes(BigInt(v));
    return Buffer.concat([control(uintType ?? 6, bytes.length), Buffer.from(bytes)]);
  }
  if (Array.isArray(v)) return Buffer.concat([control(11, v.length), ...v.map((x) => encode(x))]);
  const keys = Object.keys(v);
  return Buffer.concat([control(7, keys.length), ...keys.flatMap((k) => [encode(k), encode(v[k]!, UINT_TYPES[k])])]);
}

/** Metadata members the readers expect with a specific unsigned type. */
const UINT_TYPES: Record<string, number> = {
  record_size: 5, ip_version: 5, binary_format_major_version: 5, binary_format_minor_version: 5, node_count: 6, build_epoch: 9,
};

interface Node { child: [Node | number | undefined, Node | number | undefined] }

/** `networks`: `a.b.c.d/len` -> ISO country code. */
export function buildCountryMmdb(networks: Record<string, string>): Buffer {
  const root: Node = { child: [undefined, undefined] };
  const data: Buffer[] = [];
  let dataSize = 0;
  for (const [cidr, country] of Object.entries(networks)) {
    const [addr, lenText] = cidr.split('/') as [string, string];
    const len = Number(lenText);
    const ip = addr.split('.').reduce((a, o) => a * 256 + Number(o), 0);
    const record = encode({ country: { iso_code: country } });
    const offset = dataSize;
    data.push(record);
    dataSize += record.length;
    let node = root;
    for (let bit = 0; bit < len; bit++) {
      const side = Math.floor(ip / 2 ** (31 - bit)) % 2;
      if (bit === len - 1) { node.child[side] = offset; break; }
      let next = node.child[side];
      if (typeof next !== 'object') node.child[side] = next = { child: [undefined, undefined] };
      node = next;
    }
  }
  // Number the nodes breadth-first, then write each as two 24-bit records.
  const nodes: Node[] = [];
  const queue: Node[] = [root];
  while (queue.length > 0) {
    const n = queue.shift()!;
    nodes.push(n);
    for (const c of n.child) if (typeof c === 'object') queue.push(c);
  }
  const count = nodes.length;
  const tree = Buffer.alloc(count * 6);
  nodes.forEach((n, i) => {
    n.child.forEach((c, side) => {
      const value = c === undefined ? count : typeof c === 'number' ? count + 16 + c : nodes.indexOf(c);
      tree.writeUIntBE(value, i * 6 + side * 3, 3);
    });
  });
  const metadata = encode({
    node_count: count, record_size: 24, ip_version: 4, database_type: 'Test-Country', languages: ['en'],
    binary_format_major_version: 2, binary_format_minor_version: 0, build_epoch: BigInt(1_700_000_000),
    description: { en: 'svc test country database' },
  });
  return Buffer.concat([tree, Buffer.alloc(16), ...data, Buffer.from('ABCDEF4D61784D696E642E636F6D', 'hex'), metadata]);
}
