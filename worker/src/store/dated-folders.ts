import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/** `20250102-030405-` and 8 hex digits: the time it was taken (UTC) sorts, the rest is unique. */
export const DATED_ID = /^\d{8}-\d{6}-[0-9a-f]{8}$/;

export interface DatedFoldersOptions {
  dir: string;
  /** The most bytes all folders may hold together; the oldest go first. */
  capBytes: number;
  /** A folder older than this is dropped. */
  maxAgeMs: number;
  now?: () => number;
}

/** One folder on disk, with its meta.json as read (null: unreadable or not what was written). */
export interface DatedEntry<M> {
  id: string;
  meta: M | null;
  size: number;
  at: number;
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
 * Folders named by a dated id under `dir`, each with a meta.json, kept within a size cap and an
 * age. A store of them (failure bundles, recordings) extends this class with what it reads
 * back, and is the only one that writes or drops its folders. `F` names the files a folder may
 * hold.
 */
export class DatedFolders<M extends { time: string }, F extends string = string> {
  private readonly now: () => number;

  constructor(
    private readonly opts: DatedFoldersOptions,
    /** Is a parsed meta.json one this store wrote (the fields it reads back checked)? */
    private readonly isMeta: (v: unknown) => v is M,
  ) {
    this.now = opts.now ?? Date.now;
  }

  get dir(): string {
    return this.opts.dir;
  }

  /** A fresh id for a folder about to be written, and the time it stands for. */
  nextId(): { id: string; time: Date } {
    const time = new Date(this.now());
    return { id: newId(time), time };
  }

  /**
   * Writes a folder's files (into a temporary folder first, so a reader never sees half of
   * one), then drops what retention says must go.
   */
  async write(id: string, files: Partial<Record<F, Buffer | string>>): Promise<void> {
    if (!DATED_ID.test(id)) throw new Error(`not a dated id: ${id}`);
    const tmp = path.join(this.opts.dir, `.${id}.tmp`);
    await fs.promises.mkdir(tmp, { recursive: true });
    for (const [name, data] of Object.entries<Buffer | string | undefined>(files))
      if (data !== undefined) await fs.promises.writeFile(path.join(tmp, name), data);
    await fs.promises.rename(tmp, path.join(this.opts.dir, id));
    this.prune();
  }

  meta(id: string): M | null {
    if (!DATED_ID.test(id)) return null;
    return this.readMeta(path.join(this.opts.dir, id));
  }

  /** A file of a folder; null for an unknown id, or a name the caller did not allow. */
  read(id: string, name: string): Buffer | null {
    if (!DATED_ID.test(id) || name.includes('/') || name.startsWith('.')) return null;
    try {
      return fs.readFileSync(path.join(this.opts.dir, id, name));
    } catch {
      return null;
    }
  }

  /** Drops folders past the age, then the oldest until the rest fit the cap. */
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

  /** The folders on disk, oldest first. */
  entries(): Array<DatedEntry<M>> {
    let names: string[];
    try {
      names = fs.readdirSync(this.opts.dir);
    } catch {
      return [];
    }
    const out = [];
    for (const id of names) {
      if (!DATED_ID.test(id)) continue;
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

  private readMeta(dir: string): M | null {
    let value: unknown;
    try {
      value = JSON.parse(fs.readFileSync(path.join(dir, 'meta.json'), 'utf8'));
    } catch {
      return null;
    }
    return this.isMeta(value) ? value : null;
  }

  private drop(id: string): void {
    fs.rmSync(path.join(this.opts.dir, id), { recursive: true, force: true });
  }
}
