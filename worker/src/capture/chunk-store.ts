import zlib from 'node:zlib';
import { QUALITY, compressSync } from './brotli';

/**
 * The compressed chunks that hold one page's lines, and the budget they are counted against.
 *
 * Lines are kept as JSON records, one per line, gathered into chunks of about 32 KB that are
 * compressed together with brotli once full (neighbouring lines share headers, URLs and
 * message shapes, so a chunk compresses 8–12× where one small line alone barely shrinks).
 * Bodies and payloads over 2 KB live beside their chunk as separate blobs, compressed on
 * their own before they get here (see store.ts).
 *
 * The budget counts what the store really holds: compressed chunks and blobs, the open chunk
 * uncompressed, and a fixed overhead per chunk, blob and line. Past the budget whole chunks
 * are dropped, oldest first (one chunk is a few hundred lines at most).
 */

export const DEFAULT_BUDGET_BYTES = 30_000_000;
/** Raw bytes after which the open chunk is compressed and a new one started. */
export const CHUNK_RAW_BYTES = 32 * 1024;
export const CHUNK_OVERHEAD_BYTES = 256;
export const BLOB_OVERHEAD_BYTES = 96;
export const LINE_OVERHEAD_BYTES = 16;

export type List = 'h' | 'w';

/** One line as kept inside a chunk. */
export interface StoredRecord {
  /** seq */
  q: number;
  /** list: http or websocket */
  l: List;
  /** the line's fields, without seq and body/payload */
  f: Record<string, unknown>;
  /** inline content (body or payload), or null for none */
  c?: string | null;
  /** index of the content's blob in the chunk */
  b?: number;
  /** blob encoding: bytes that read back as base64 */
  e?: 'b64';
  /** tag that survives a clear which keeps it */
  t?: string;
}

export interface Chunk {
  minSeq: number;
  maxSeq: number;
  count: number;
  /** JSON records while the chunk is open; null once sealed. */
  records: string[] | null;
  rawBytes: number;
  /** The compressed records once sealed. */
  data: Buffer | null;
  blobs: Buffer[];
  blobBytes: number;
  tags: Set<string> | null;
  /** What this chunk counts against the budget. */
  bytes: number;
}

/** What the chunks hold now, and what they have dropped and taken in since the page was created. */
export interface ChunkFigures {
  bytes: number;
  lines: number;
  chunks: number;
  droppedLines: number;
  droppedBytes: number;
  rawIn: number;
  compressedOut: number;
}

const newChunk = (): Chunk => ({
  minSeq: Infinity,
  maxSeq: 0,
  count: 0,
  records: [],
  rawBytes: 0,
  data: null,
  blobs: [],
  blobBytes: 0,
  tags: null,
  bytes: CHUNK_OVERHEAD_BYTES,
});

export function decodeChunk(chunk: Chunk): StoredRecord[] {
  const records =
    chunk.records ??
    (chunk.data ? zlib.brotliDecompressSync(chunk.data).toString('utf8').split('\n') : []);
  return records.map((r) => JSON.parse(r) as StoredRecord);
}

export class ChunkStore {
  /** Oldest first; the last one is open. */
  private chunks: Chunk[] = [newChunk()];
  private used = CHUNK_OVERHEAD_BYTES;
  private lines = 0;
  private droppedLines = 0;
  private droppedBytes = 0;
  private rawIn = 0;
  private compressedOut = 0;

  constructor(readonly budget: number) {}

  figures(): ChunkFigures {
    return {
      bytes: this.used,
      lines: this.lines,
      chunks: this.chunks.length,
      droppedLines: this.droppedLines,
      droppedBytes: this.droppedBytes,
      rawIn: this.rawIn,
      compressedOut: this.compressedOut,
    };
  }

  /** Drops every chunk (not counted as dropped); the figures since creation go on. */
  reset(): void {
    this.chunks = [newChunk()];
    this.used = CHUNK_OVERHEAD_BYTES;
    this.lines = 0;
  }

  private get open(): Chunk {
    return this.chunks[this.chunks.length - 1] as Chunk;
  }

  /** Adds a compressed blob to the open chunk; returns its index there, for the record's `b`. */
  addBlob(data: Buffer): number {
    const chunk = this.open;
    const index = chunk.blobs.length;
    chunk.blobs.push(data);
    chunk.blobBytes += data.length;
    chunk.bytes += data.length + BLOB_OVERHEAD_BYTES;
    this.used += data.length + BLOB_OVERHEAD_BYTES;
    this.compressedOut += data.length;
    return index;
  }

  /** Adds a record to the open chunk, seals it once full, and drops the oldest past the budget. */
  append(rec: StoredRecord): void {
    this.addRecord(this.open, rec, JSON.stringify(rec));
    const open = this.open;
    if (open.rawBytes >= CHUNK_RAW_BYTES || open.blobBytes >= this.budget / 8) {
      this.seal(open);
      this.chunks.push(newChunk());
      this.used += CHUNK_OVERHEAD_BYTES;
    }
    this.enforceBudget();
  }

  private addRecord(chunk: Chunk, rec: StoredRecord, json: string): void {
    const bytes = Buffer.byteLength(json);
    (chunk.records as string[]).push(json);
    chunk.count += 1;
    chunk.minSeq = Math.min(chunk.minSeq, rec.q);
    chunk.maxSeq = Math.max(chunk.maxSeq, rec.q);
    chunk.rawBytes += bytes;
    chunk.bytes += bytes + LINE_OVERHEAD_BYTES;
    this.used += bytes + LINE_OVERHEAD_BYTES;
    this.rawIn += bytes;
    this.lines += 1;
    if (rec.t) (chunk.tags ??= new Set()).add(rec.t);
  }

  private seal(chunk: Chunk): void {
    const records = chunk.records as string[];
    const raw = Buffer.from(records.join('\n'), 'utf8');
    const data = compressSync(raw, QUALITY);
    const before = chunk.bytes;
    chunk.data = data;
    chunk.records = null;
    chunk.bytes =
      CHUNK_OVERHEAD_BYTES +
      data.length +
      chunk.count * LINE_OVERHEAD_BYTES +
      chunk.blobBytes +
      chunk.blobs.length * BLOB_OVERHEAD_BYTES;
    this.used += chunk.bytes - before;
    this.compressedOut += data.length;
  }

  private enforceBudget(): void {
    while (this.used > this.budget && this.chunks.length > 1) {
      this.dropChunk(this.chunks.shift() as Chunk);
    }
    if (this.used > this.budget) {
      // One open chunk alone is over a (tiny) budget: it goes too.
      this.dropChunk(this.chunks.shift() as Chunk);
      this.chunks.push(newChunk());
      this.used += CHUNK_OVERHEAD_BYTES;
    }
  }

  private dropChunk(chunk: Chunk): void {
    this.used -= chunk.bytes;
    this.lines -= chunk.count;
    this.droppedLines += chunk.count;
    this.droppedBytes += chunk.bytes;
  }

  /** Counts a line refused before it got here (the queue in front is full). */
  refused(bytes: number): void {
    this.droppedLines += 1;
    this.droppedBytes += bytes;
  }

  /** Counts raw content bytes taken in as a blob. */
  tookIn(bytes: number): void {
    this.rawIn += bytes;
  }

  /** Empties every chunk except records tagged `keepTag` whose URL passes `keep`. */
  clear(keepTag: string | null, keep: (url: string) => boolean): void {
    const kept: { rec: StoredRecord; blob: Buffer | null }[] = [];
    if (keepTag) {
      for (const chunk of this.chunks) {
        if (!chunk.tags?.has(keepTag)) continue;
        for (const rec of decodeChunk(chunk)) {
          if (rec.t !== keepTag || !keep(String(rec.f.url))) continue;
          kept.push({ rec, blob: rec.b === undefined ? null : (chunk.blobs[rec.b] ?? null) });
        }
      }
    }
    this.reset();
    const chunk = this.open;
    for (const { rec, blob } of kept) {
      if (blob) {
        rec.b = chunk.blobs.length;
        chunk.blobs.push(blob);
        chunk.blobBytes += blob.length;
        chunk.bytes += blob.length + BLOB_OVERHEAD_BYTES;
        this.used += blob.length + BLOB_OVERHEAD_BYTES;
      }
      this.addRecord(chunk, rec, JSON.stringify(rec));
    }
  }

  /** Copies of the chunks holding lines with seq > `since`, safe to read while lines go on. */
  snapshot(since: number): Chunk[] {
    return this.chunks
      .filter((c) => c.maxSeq > since)
      .map((c) => ({ ...c, blobs: [...c.blobs], records: c.records ? [...c.records] : null }));
  }
}
