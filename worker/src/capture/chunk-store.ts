import zlib from 'node:zlib';
import { QUALITY, compressSync } from './brotli';
import type { StoredRecord } from './stored-record';
import { parseStoredRecord } from './stored-record';

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

export type { List, StoredRecord } from './stored-record';

interface ChunkFields {
  minSeq: number;
  maxSeq: number;
  count: number;
  rawBytes: number;
  blobs: Buffer[];
  blobBytes: number;
  tags: Set<string> | null;
  /** What this chunk counts against the budget. */
  bytes: number;
}

/** The chunk lines are added to: its records as JSON, not compressed yet. */
interface OpenChunk extends ChunkFields {
  records: string[];
  data: null;
}

/** A full chunk: its records compressed together. */
interface SealedChunk extends ChunkFields {
  records: null;
  data: Buffer;
}

export type Chunk = OpenChunk | SealedChunk;

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

const newChunk = (): OpenChunk => ({
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
    chunk.records ?? zlib.brotliDecompressSync(chunk.data).toString('utf8').split('\n');
  return records.map(parseStoredRecord);
}

export class ChunkStore {
  /** Oldest first. */
  private sealed: SealedChunk[] = [];
  private open: OpenChunk = newChunk();
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
      chunks: this.sealed.length + 1,
      droppedLines: this.droppedLines,
      droppedBytes: this.droppedBytes,
      rawIn: this.rawIn,
      compressedOut: this.compressedOut,
    };
  }

  /** Drops every chunk (not counted as dropped); the figures since creation go on. */
  reset(): void {
    this.sealed = [];
    this.open = newChunk();
    this.used = CHUNK_OVERHEAD_BYTES;
    this.lines = 0;
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
      this.sealed.push(this.seal(open));
      this.open = newChunk();
      this.used += CHUNK_OVERHEAD_BYTES;
    }
    this.enforceBudget();
  }

  private addRecord(chunk: OpenChunk, rec: StoredRecord, json: string): void {
    const bytes = Buffer.byteLength(json);
    chunk.records.push(json);
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

  /** The open chunk compressed; it counts what it holds now against the budget. */
  private seal(chunk: OpenChunk): SealedChunk {
    const raw = Buffer.from(chunk.records.join('\n'), 'utf8');
    const data = compressSync(raw, QUALITY);
    const bytes =
      CHUNK_OVERHEAD_BYTES +
      data.length +
      chunk.count * LINE_OVERHEAD_BYTES +
      chunk.blobBytes +
      chunk.blobs.length * BLOB_OVERHEAD_BYTES;
    this.used += bytes - chunk.bytes;
    this.compressedOut += data.length;
    return { ...chunk, records: null, data, bytes };
  }

  private enforceBudget(): void {
    while (this.used > this.budget) {
      const oldest = this.sealed.shift();
      if (oldest) {
        this.dropChunk(oldest);
        continue;
      }
      // One open chunk alone is over a (tiny) budget: it goes too.
      this.dropChunk(this.open);
      this.open = newChunk();
      this.used += CHUNK_OVERHEAD_BYTES;
      return;
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
      for (const chunk of [...this.sealed, this.open]) {
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
    const copies: Chunk[] = this.sealed
      .filter((c) => c.maxSeq > since)
      .map((c) => ({ ...c, blobs: [...c.blobs] }));
    const open = this.open;
    if (open.maxSeq > since) {
      copies.push({ ...open, blobs: [...open.blobs], records: [...open.records] });
    }
    return copies;
  }
}
