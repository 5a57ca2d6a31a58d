import { promisify } from 'node:util';
import zlib from 'node:zlib';
import type { HttpLine, NewHttpLine, NewWsLine, WsLine } from './lines';

/**
 * The compressed, bounded line store of one page.
 *
 * Lines are kept as JSON records, one per line, gathered into chunks of about 32 KB that are
 * compressed together with brotli once full (neighbouring lines share headers, URLs and
 * message shapes, so a chunk compresses 8–12× where one small line alone barely shrinks).
 * Bodies and payloads over 2 KB live beside their chunk as separate blobs, compressed on
 * their own, big ones on libuv's thread pool so the event loop never stalls on a 2 MB body.
 *
 * The budget counts what the store really holds: compressed chunks and blobs, the open chunk
 * uncompressed, and a fixed overhead per chunk, blob and line. Past the budget whole chunks
 * are dropped, oldest first (one chunk is a few hundred lines at most).
 *
 * Appends go through one ordered queue: `seq` is given when a line enters the store, so seq
 * order is arrival order even when a big blob is still being compressed, and an emptying
 * (`clear`) applies exactly between the lines queued before and after it.
 */

export const DEFAULT_BUDGET_BYTES = 30_000_000;
/** Raw bytes after which the open chunk is compressed and a new one started. */
export const CHUNK_RAW_BYTES = 32 * 1024;
/** Bodies and payloads longer than this (characters) are stored as their own blob. */
export const INLINE_MAX_CHARS = 2048;
export const CHUNK_OVERHEAD_BYTES = 256;
export const BLOB_OVERHEAD_BYTES = 96;
export const LINE_OVERHEAD_BYTES = 16;
/** Blobs up to this size are compressed at once on the event loop (well under a millisecond). */
const SYNC_COMPRESS_BYTES = 64 * 1024;
const SYNC_DECOMPRESS_BYTES = 16 * 1024;
/** Raw bytes waiting for compression beyond which the faster, lighter quality is used. */
const FAST_QUALITY_ABOVE = 8 * 1024 * 1024;
/**
 * Raw bytes waiting (blobs being compressed, lines queued behind a body still being read) beyond
 * which new lines are refused and counted as dropped: a page that streams faster than the
 * thread pool compresses, or behind a slow body, cannot make the queue grow without bound.
 */
const MAX_PENDING_BYTES = 64 * 1024 * 1024;
/** What a queued line is counted as, besides its content. */
const QUEUED_LINE_BYTES = 256;
/** Bodies and payloads in one reply, in characters, before the rest are left out. */
export const DEFAULT_MAX_REPLY_CHARS = 64_000_000;
/** Chunks decoded between two yields to the event loop while answering a query. */
const CHUNKS_PER_YIELD = 64;

const QUALITY = 5;
const FAST_QUALITY = 1;

const brotliDecompress = promisify(zlib.brotliDecompress);

function brotliOptions(quality: number, size: number): zlib.BrotliOptions {
  return {
    params: {
      [zlib.constants.BROTLI_PARAM_QUALITY]: quality,
      [zlib.constants.BROTLI_PARAM_SIZE_HINT]: size,
    },
  };
}

/**
 * zlib's sync and async results can be views into a larger 16 KB output buffer: keeping such a
 * view would keep the whole buffer alive. Copies into an exactly sized one when needed.
 */
function exact(buf: Buffer): Buffer {
  if (buf.byteOffset === 0 && buf.buffer.byteLength === buf.length) return buf;
  const copy = Buffer.allocUnsafeSlow(buf.length);
  buf.copy(copy);
  return copy;
}

type List = 'h' | 'w';
type Encoding = 'utf8' | 'base64';

/** One line as kept inside a chunk. */
interface StoredRecord {
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

interface Chunk {
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

interface PendingBlob {
  enc: Encoding;
  data: Buffer | null;
  rawBytes: number;
}

interface LineOp {
  type: 'line';
  list: List;
  fields: Record<string, unknown>;
  inline: string | null;
  blob: PendingBlob | null;
  tag: string | null;
  ready: boolean;
  /** A reservation given up: it takes no seq. */
  skip: boolean;
  /** Counted in `waitingBytes` while queued. */
  size: number;
}

interface ClearOp {
  type: 'clear';
  keepTag: string | null;
  keep: (url: string) => boolean;
  ready: true;
}

type Op = LineOp | ClearOp;

export interface Reservation {
  fillHttp(line: NewHttpLine, body: string | null, tag?: string | null): void;
  cancel(): void;
}

export interface StoreOptions {
  budgetBytes?: number;
  maxReplyChars?: number;
}

export interface StoreStats {
  /** Bytes counted against the budget now. */
  bytes: number;
  budget: number;
  /** Lines held now. */
  lines: number;
  chunks: number;
  /** Lines and bytes dropped to stay within the budget since the page was created. */
  dropped_lines: number;
  dropped_bytes: number;
  /** Lines waiting for their body to be read or their blob to be compressed, and raw bytes. */
  pending_lines: number;
  pending_bytes: number;
  /** Highest seq given so far. */
  mark: number;
  /** Raw bytes of every line and content ever stored, and their compressed bytes. */
  raw_bytes_in: number;
  compressed_bytes_out: number;
}

export interface QueryFilter {
  since: number;
  urlContains?: string;
  resourceType?: string;
  includeBody: boolean;
}

export interface QueryResult {
  mark: number;
  http: HttpLine[];
  websocket: WsLine[];
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

const yieldToLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

export class LineStore {
  readonly budget: number;
  private readonly maxReplyChars: number;
  /** Oldest first; the last one is open. */
  private chunks: Chunk[] = [newChunk()];
  private used = CHUNK_OVERHEAD_BYTES;
  private seq = 0;
  private lines = 0;
  private droppedLines = 0;
  private droppedBytes = 0;
  private queue: Op[] = [];
  private pendingBytes = 0;
  private waitingBytes = 0;
  private rawIn = 0;
  private compressedOut = 0;
  private closed = false;

  constructor(opts: StoreOptions = {}) {
    this.budget = opts.budgetBytes ?? DEFAULT_BUDGET_BYTES;
    this.maxReplyChars = opts.maxReplyChars ?? DEFAULT_MAX_REPLY_CHARS;
  }

  /** Highest seq given so far (0 before the first line). */
  get mark(): number {
    return this.seq;
  }

  stats(): StoreStats {
    const pending = this.queue.filter((op) => op.type === 'line').length;
    return {
      bytes: this.used,
      budget: this.budget,
      lines: this.lines,
      chunks: this.chunks.length,
      dropped_lines: this.droppedLines,
      dropped_bytes: this.droppedBytes,
      pending_lines: pending,
      pending_bytes: this.pendingBytes + this.waitingBytes,
      mark: this.seq,
      raw_bytes_in: this.rawIn,
      compressed_bytes_out: this.compressedOut,
    };
  }

  /** Adds an HTTP line; `body` is the text body (already cut) or null. */
  appendHttp(line: NewHttpLine, body: string | null, tag: string | null = null): void {
    this.enqueue('h', line, body, 'utf8', tag);
  }

  /** Adds a WebSocket line; `payload` is text, or base64 when the line is binary. */
  appendWs(line: NewWsLine, payload: string | null): void {
    this.enqueue('w', line, payload, line.binary ? 'base64' : 'utf8', null);
  }

  /**
   * Empties both lists, in queue order, except lines tagged `keepTag` whose URL passes `keep`
   * (the new document's own response lines, added before its commit). `seq` goes on.
   */
  clear(keepTag: string | null = null, keep: (url: string) => boolean = () => true): void {
    if (this.closed) return;
    this.queue.push({ type: 'clear', keepTag, keep, ready: true });
    this.drain();
  }

  /** Drops everything; later appends are ignored. */
  close(): void {
    this.closed = true;
    this.queue = [];
    this.pendingBytes = 0;
    this.waitingBytes = 0;
    this.chunks = [newChunk()];
    this.used = CHUNK_OVERHEAD_BYTES;
    this.lines = 0;
  }

  /**
   * Holds the next place in line for an HTTP line whose body is still being read: lines added
   * later wait behind it, so seq follows the order in which responses completed. Fill it (once)
   * or cancel it.
   */
  reserve(): Reservation {
    const op: LineOp = {
      type: 'line',
      list: 'h',
      fields: {},
      inline: null,
      blob: null,
      tag: null,
      ready: false,
      skip: false,
      size: QUEUED_LINE_BYTES,
    };
    if (!this.closed) this.push(op);
    let done = false;
    return {
      fillHttp: (line, body, tag = null) => {
        if (done || this.closed) return;
        done = true;
        op.fields = line;
        op.tag = tag;
        this.prepare(op, body, 'utf8');
        this.resize(op, body);
        this.drain();
      },
      cancel: () => {
        if (done || this.closed) return;
        done = true;
        op.skip = true;
        op.ready = true;
        this.drain();
      },
    };
  }

  private enqueue(
    list: List,
    fields: Record<string, unknown>,
    content: string | null,
    enc: Encoding,
    tag: string | null,
  ): void {
    if (this.closed) return;
    if (this.queue.length > 0 && this.pendingBytes + this.waitingBytes > MAX_PENDING_BYTES) {
      this.droppedLines += 1;
      this.droppedBytes += content?.length ?? 0;
      return;
    }
    const op: LineOp = {
      type: 'line',
      list,
      fields,
      inline: null,
      blob: null,
      tag,
      ready: false,
      skip: false,
      size: QUEUED_LINE_BYTES,
    };
    this.push(op);
    this.prepare(op, content, enc);
    this.resize(op, content);
    this.drain();
  }

  private push(op: LineOp): void {
    this.queue.push(op);
    this.waitingBytes += op.size;
  }

  /** An inline content waits in the queue as it is; a blob's bytes are counted as pending. */
  private resize(op: LineOp, content: string | null): void {
    const size = QUEUED_LINE_BYTES + (op.blob ? 0 : (content?.length ?? 0));
    this.waitingBytes += size - op.size;
    op.size = size;
  }

  /** Sets the op's content, inline or as a blob compressed now or on the thread pool. */
  private prepare(op: LineOp, content: string | null, enc: Encoding): void {
    if (content === null || content.length <= INLINE_MAX_CHARS) {
      op.inline = content;
      op.ready = true;
      return;
    }
    const raw = Buffer.from(content, enc);
    if (this.pendingBytes + raw.length > MAX_PENDING_BYTES) {
      // The page produces faster than the thread pool compresses: refuse rather than grow.
      this.droppedLines += 1;
      this.droppedBytes += raw.length;
      op.skip = true;
      op.ready = true;
      return;
    }
    const quality = this.pendingBytes > FAST_QUALITY_ABOVE ? FAST_QUALITY : QUALITY;
    const blob: PendingBlob = { enc, data: null, rawBytes: raw.length };
    op.blob = blob;
    this.rawIn += raw.length;
    if (raw.length <= SYNC_COMPRESS_BYTES) {
      blob.data = exact(zlib.brotliCompressSync(raw, brotliOptions(quality, raw.length)));
      op.ready = true;
      return;
    }
    this.pendingBytes += raw.length;
    zlib.brotliCompress(raw, brotliOptions(quality, raw.length), (err, out) => {
      if (this.closed) return;
      this.pendingBytes -= raw.length;
      // A blob that cannot be compressed (never with valid input) keeps its line, no content.
      if (err) op.blob = null;
      else blob.data = exact(out);
      op.ready = true;
      this.drain();
    });
  }

  private drain(): void {
    while (this.queue.length > 0 && !this.closed) {
      const op = this.queue[0] as Op;
      if (!op.ready) return;
      this.queue.shift();
      if (op.type === 'clear') {
        this.applyClear(op);
        continue;
      }
      this.waitingBytes -= op.size;
      if (!op.skip) this.applyLine(op);
    }
  }

  private get open(): Chunk {
    return this.chunks[this.chunks.length - 1] as Chunk;
  }

  private applyLine(op: LineOp): void {
    this.seq += 1;
    const rec: StoredRecord = { q: this.seq, l: op.list, f: op.fields };
    if (op.tag) rec.t = op.tag;
    const chunk = this.open;
    if (op.blob?.data) {
      rec.b = chunk.blobs.length;
      if (op.blob.enc === 'base64') rec.e = 'b64';
      this.addBlob(chunk, op.blob.data);
    } else {
      rec.c = op.inline;
    }
    this.addRecord(chunk, rec, JSON.stringify(rec));
    this.afterAppend();
  }

  private addBlob(chunk: Chunk, data: Buffer): void {
    chunk.blobs.push(data);
    chunk.blobBytes += data.length;
    chunk.bytes += data.length + BLOB_OVERHEAD_BYTES;
    this.used += data.length + BLOB_OVERHEAD_BYTES;
    this.compressedOut += data.length;
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

  private afterAppend(): void {
    const open = this.open;
    if (open.rawBytes >= CHUNK_RAW_BYTES || open.blobBytes >= this.budget / 8) {
      this.seal(open);
      this.chunks.push(newChunk());
      this.used += CHUNK_OVERHEAD_BYTES;
    }
    this.enforceBudget();
  }

  private seal(chunk: Chunk): void {
    const records = chunk.records as string[];
    const raw = Buffer.from(records.join('\n'), 'utf8');
    const data = exact(zlib.brotliCompressSync(raw, brotliOptions(QUALITY, raw.length)));
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

  private applyClear(op: ClearOp): void {
    const kept: { rec: StoredRecord; blob: Buffer | null }[] = [];
    if (op.keepTag) {
      for (const chunk of this.chunks) {
        if (!chunk.tags?.has(op.keepTag)) continue;
        for (const rec of decodeChunk(chunk)) {
          if (rec.t !== op.keepTag || !op.keep(String(rec.f.url))) continue;
          kept.push({ rec, blob: rec.b === undefined ? null : (chunk.blobs[rec.b] ?? null) });
        }
      }
    }
    this.chunks = [newChunk()];
    this.used = CHUNK_OVERHEAD_BYTES;
    this.lines = 0;
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

  /**
   * Lines with seq > `since`, filtered, as clients read them. Reads a snapshot taken at once
   * (`mark` is the highest seq at that moment); decoding yields to the event loop now and then.
   */
  async query(filter: QueryFilter): Promise<QueryResult> {
    const mark = this.seq;
    const snapshot = this.chunks
      .filter((c) => c.maxSeq > filter.since)
      .map((c) => ({ ...c, blobs: [...c.blobs], records: c.records ? [...c.records] : null }));
    const http: HttpLine[] = [];
    const websocket: WsLine[] = [];
    const contents: { chunk: Chunk; rec: StoredRecord; line: HttpLine | WsLine }[] = [];
    let decoded = 0;
    for (const chunk of snapshot) {
      for (const rec of decodeChunk(chunk)) {
        if (rec.q <= filter.since || rec.q > mark) continue;
        if (filter.urlContains !== undefined && !String(rec.f.url).includes(filter.urlContains)) {
          continue;
        }
        if (rec.l === 'h') {
          if (filter.resourceType !== undefined && rec.f.resource_type !== filter.resourceType) {
            continue;
          }
          const line = { seq: rec.q, ...rec.f } as unknown as HttpLine;
          http.push(line);
          if (filter.includeBody) contents.push({ chunk, rec, line });
        } else {
          const line = { seq: rec.q, ...rec.f } as unknown as WsLine;
          websocket.push(line);
          if (filter.includeBody) contents.push({ chunk, rec, line });
        }
      }
      decoded += 1;
      if (decoded % CHUNKS_PER_YIELD === 0) await yieldToLoop();
    }
    // Contents in seq order, so that the reply limit leaves out the newest ones only.
    let replyChars = 0;
    let full = false;
    for (const { chunk, rec, line } of contents) {
      let text = full ? null : await this.content(chunk, rec);
      if (text !== null && replyChars + text.length > this.maxReplyChars) {
        full = true;
        text = null;
      }
      replyChars += text?.length ?? 0;
      if (rec.l === 'h') {
        const h = line as HttpLine;
        h.body = text;
        if (full && h.error === null && (rec.b !== undefined || (rec.c ?? null) !== null)) {
          h.error = `body left out: this reply reached ${this.maxReplyChars} characters; ask again with since=${rec.q - 1}`;
        }
      } else {
        (line as WsLine).payload = text;
      }
    }
    return { mark, http, websocket };
  }

  private async content(chunk: Chunk, rec: StoredRecord): Promise<string | null> {
    if (rec.b === undefined) return rec.c ?? null;
    const blob = chunk.blobs[rec.b];
    if (!blob) return null;
    const raw =
      blob.length <= SYNC_DECOMPRESS_BYTES
        ? zlib.brotliDecompressSync(blob)
        : await brotliDecompress(blob);
    return raw.toString(rec.e === 'b64' ? 'base64' : 'utf8');
  }
}

function decodeChunk(chunk: Chunk): StoredRecord[] {
  const records =
    chunk.records ??
    (chunk.data ? zlib.brotliDecompressSync(chunk.data).toString('utf8').split('\n') : []);
  return records.map((r) => JSON.parse(r) as StoredRecord);
}
