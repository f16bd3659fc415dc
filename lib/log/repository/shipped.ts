// What a repository has received of one log: the names of its rolled files already shipped,
// kept in `<log dir>/.backup/<log>.<repository>.json` (written to a temporary name, then
// renamed) so a restart neither ships a file twice nor forgets one. Names are kept without a
// `.gz`: a file shipped before its compression is the same file after it.
import fsp from 'node:fs/promises';
import path from 'node:path';

const stem = (name: string): string => (name.endsWith('.gz') ? name.slice(0, -3) : name);

export class ShippedSet {
  private names = new Set<string>();
  private loaded = false;
  readonly file: string;

  constructor(dir: string, base: string, repository: string) {
    this.file = path.join(dir, '.backup', `${base}.${encodeURIComponent(repository)}.json`);
  }

  /** False until the record was read: nothing counts as shipped before that. */
  get ready(): boolean {
    return this.loaded;
  }

  has(name: string): boolean {
    return this.loaded && this.names.has(stem(name));
  }

  async load(): Promise<void> {
    if (this.loaded) return;
    try {
      const list = JSON.parse(await fsp.readFile(this.file, 'utf8')) as unknown;
      if (Array.isArray(list)) this.names = new Set(list.filter((n): n is string => typeof n === 'string'));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    this.loaded = true;
  }

  /** Adds `shipped` and forgets names no longer among `present` (deleted by retention). */
  async record(shipped: readonly string[], present: readonly string[]): Promise<void> {
    for (const n of shipped) this.names.add(stem(n));
    const keep = new Set(present.map(stem));
    for (const n of this.names) if (!keep.has(n)) this.names.delete(n);
    await fsp.mkdir(path.dirname(this.file), { recursive: true });
    const tmp = `${this.file}.tmp`;
    await fsp.writeFile(tmp, JSON.stringify([...this.names].sort()));
    await fsp.rename(tmp, this.file);
  }
}
