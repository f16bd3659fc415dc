// Country codes of client addresses from the local MaxMind-format databases (`.mmdb`) of
// env.geoip.path, read with mmdb-lib. The files are read once when a setting loads (never on a
// request); a lookup walks the in-memory tree. Databases are asked in file-name order and the
// first that knows the address answers (`country`, else `registered_country`).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { Reader, type CountryResponse } from 'mmdb-lib';
import type { CountryLookup } from './conditions.js';


export interface GeoIp {
  lookup: CountryLookup;
  files: string[];
}

/** The .mmdb files of a directory, sorted; throws when the directory cannot be read. */
function mmdbFiles(dir: string): string[] {
  return readdirSync(dir).filter((n) => n.toLowerCase().endsWith('.mmdb')).sort();
}

/**
 * Checks every database of the directory opens, keeping none (the primary validates settings
 * and never looks an address up). Returns the file names; throws like openGeoIp.
 */
export function checkGeoIp(dir: string): string[] {
  const files = mmdbFiles(dir);
  readAll(dir, files);
  return files;
}

/** The databases last opened, kept while the directory's files keep their names, sizes and times. */
let cached: { dir: string; signature: string; geo: GeoIp } | undefined;

/**
 * Opens every database of the directory; throws with the file name when one is not a MaxMind
 * DB. A reload with the same files reuses the open ones (a City database is tens of MB).
 */
export function openGeoIp(dir: string): GeoIp {
  const files = mmdbFiles(dir);
  const signature = files.map((f) => {
    const st = statSync(path.join(dir, f));
    return `${f}:${st.size}:${st.mtimeMs}`;
  }).join('|');
  if (cached?.dir === dir && cached.signature === signature) return cached.geo;
  const geo = readAll(dir, files);
  cached = { dir, signature, geo };
  return geo;
}

function readAll(dir: string, files: string[]): GeoIp {
  const readers: Reader<CountryResponse>[] = [];
  for (const f of files) {
    try {
      readers.push(new Reader<CountryResponse>(readFileSync(path.join(dir, f))));
    } catch (err) {
      throw new Error(`${path.join(dir, f)} is not a readable MaxMind database: ${(err as Error).message}`);
    }
  }
  // One client sends many requests in a row: its answer is kept for the next one.
  let lastAddress = '';
  let lastCountry: string | undefined;
  const lookup: CountryLookup = (address) => {
    if (address === lastAddress) return lastCountry;
    let country: string | undefined;
    for (const r of readers) {
      let rec: CountryResponse | null = null;
      try {
        rec = r.get(address);
      } catch {
        rec = null; // an address the database's IP version cannot hold
      }
      const code = rec?.country?.iso_code ?? rec?.registered_country?.iso_code;
      if (code !== undefined) { country = code.toUpperCase(); break; }
    }
    lastAddress = address;
    lastCountry = country;
    return country;
  };
  return { lookup, files };
}
