import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { isRecord } from '@persona-browser/service-kit';

/** The files a bundle may hold, and the type each is served with. */
export const BUNDLE_FILES = {
  'meta.json': 'application/json; charset=utf-8',
  'screenshot.png': 'image/png',
  'page.html': 'text/html; charset=utf-8',
  'network.json': 'application/json; charset=utf-8',
  'log.jsonl': 'application/x-ndjson; charset=utf-8',
} as const;
export type BundleFile = keyof typeof BUNDLE_FILES;

/** `20250102-030405-` and 8 hex digits: the time it was taken (UTC) sorts, the rest is unique. */
const ID = /^\d{8}-\d{6}-[0-9a-f]{8}$/;

export const isBundleFile = (name: string): name is BundleFile =>
  Object.prototype.hasOwnProperty.call(BUNDLE_FILES, name);

/** What meta.json says of a failed call; the store reads only these fields back. */
export interface BundleMeta {
  debug_id: string;
  plugin: string;
  page_id: string;
  url: string;
  /** ISO 8601, UTC: when the call failed. */
  time: string;
  duration_ms: number;
  error: { status: number | null; message: string };
  /** Files that could not be written, and why (a hung or crashed page, a secret on screen). */
  missing: Record<string, string>;
}

export interface BundleSummary {
  debug_id: string;
  plugin: string;
  page_id: string;
  error: string;
  time: string;
  /** Bytes of all its files. */
  size: number;
}

export interface BundleStoreOptions {
  dir: string;
  /** The most bytes all bundles may hold together; the oldest go first. */
  capBytes: number;
  /** A bundle older than this is dropped. */
  maxAgeMs: number;
  now?: () => number;
}

const text = (v: unknown): v is string => typeof v === 'string';

/** A meta.json as `write` was given it (its fields the list shows are checked). */
function isMeta(v: unknown): v is BundleMeta {
  if (!isRecord(v) || !isRecord(v.error)) return false;
  return text(v.plugin) && text(v.page_id) && text(v.time) && text(v.error.message);
}

function newId(at: Date): string {
  const stamp = at.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  return `${stamp}-${crypto.randomBytes(4).toString('hex')}`;
}

function sizeOf(dir: string): number {
  let total = 0;
  for (const name of fs.readdirSync(dir)) total += fs.statSync(path.join(dir, name)).size;
  return total;
}

/**
 * The failure bundles of plugin calls, one folder each under `dir`, kept within a size cap and
 * an age. The store is the only one that writes, lists or drops them.
 */
export class BundleStore {
  private readonly now: () => number;

  constructor(private readonly opts: BundleStoreOptions) {
    this.now = opts.now ?? Date.now;
  }

  get dir(): string {
    return this.opts.dir;
  }

  /** A fresh id for a bundle about to be written, and the time it stands for. */
  nextId(): { id: string; time: Date } {
    const time = new Date(this.now());
    return { id: newId(time), time };
  }

  /**
   * Writes a bundle's files (into a temporary folder first, so a reader never sees half of
   * one), then drops what retention says must go.
   */
  async write(id: string, files: Partial<Record<BundleFile, Buffer | string>>): Promise<void> {
    if (!ID.test(id)) throw new Error(`not a bundle id: ${id}`);
    const tmp = path.join(this.opts.dir, `.${id}.tmp`);
    await fs.promises.mkdir(tmp, { recursive: true });
    for (const [name, data] of Object.entries(files))
      if (data !== undefined) await fs.promises.writeFile(path.join(tmp, name), data);
    await fs.promises.rename(tmp, path.join(this.opts.dir, id));
    this.prune();
  }

  /** Every bundle, newest first. */
  list(): BundleSummary[] {
    return this.entries()
      .map(({ id, meta, size }) => ({
        debug_id: id,
        plugin: meta?.plugin ?? '',
        page_id: meta?.page_id ?? '',
        error: meta?.error.message ?? '',
        time: meta?.time ?? '',
        size,
      }))
      .reverse();
  }

  meta(id: string): BundleMeta | null {
    if (!ID.test(id)) return null;
    return this.readMeta(path.join(this.opts.dir, id));
  }

  /** A file of a bundle and its type, or null for an unknown id or file name. */
  file(id: string, name: string): { bytes: Buffer; contentType: string } | null {
    if (!ID.test(id) || !isBundleFile(name)) return null;
    try {
      return {
        bytes: fs.readFileSync(path.join(this.opts.dir, id, name)),
        contentType: BUNDLE_FILES[name],
      };
    } catch {
      return null;
    }
  }

  /** Drops bundles past the age, then the oldest until the rest fit the cap. */
  prune(): void {
    const oldest = this.now() - this.opts.maxAgeMs;
    let total = 0;
    const kept: Array<{ id: string; size: number }> = [];
    for (const e of this.entries()) {
      if (e.at < oldest) this.drop(e.id);
      else {
        kept.push(e);
        total += e.size;
      }
    }
    for (const e of kept) {
      if (total <= this.opts.capBytes) break;
      this.drop(e.id);
      total -= e.size;
    }
  }

  /** The bundles on disk, oldest first. */
  private entries(): Array<{ id: string; meta: BundleMeta | null; size: number; at: number }> {
    let names: string[];
    try {
      names = fs.readdirSync(this.opts.dir);
    } catch {
      return [];
    }
    const out = [];
    for (const id of names) {
      if (!ID.test(id)) continue;
      const dir = path.join(this.opts.dir, id);
      try {
        const meta = this.readMeta(dir);
        const at = meta ? Date.parse(meta.time) : fs.statSync(dir).mtimeMs;
        out.push({ id, meta, size: sizeOf(dir), at: Number.isNaN(at) ? 0 : at });
      } catch {
        // Dropped meanwhile.
      }
    }
    // The id starts with the time: names sort as times do, and break ties.
    return out.sort((a, b) => a.at - b.at || (a.id < b.id ? -1 : 1));
  }

  private readMeta(dir: string): BundleMeta | null {
    let value: unknown;
    try {
      value = JSON.parse(fs.readFileSync(path.join(dir, 'meta.json'), 'utf8'));
    } catch {
      return null;
    }
    return isMeta(value) ? value : null;
  }

  private drop(id: string): void {
    fs.rmSync(path.join(this.opts.dir, id), { recursive: true, force: true });
  }
}
