import type { Encoding, PendingBlob } from './blobs';
import { BlobCompressor } from './blobs';
import type { LineEntry, StoredRecord } from './stored-record';
import { ChunkStore, DEFAULT_BUDGET_BYTES } from './chunk-store';
import type { NewHttpLine, NewWsLine } from './lines';
import type { QueryFilter, QueryResult } from './reply';
import { DEFAULT_MAX_REPLY_CHARS, assembleReply } from './reply';

export {
  BLOB_OVERHEAD_BYTES,
  CHUNK_OVERHEAD_BYTES,
  CHUNK_RAW_BYTES,
  DEFAULT_BUDGET_BYTES,
  LINE_OVERHEAD_BYTES,
} from './chunk-store';
export { DEFAULT_MAX_REPLY_CHARS } from './reply';
export type { QueryFilter, QueryResult } from './reply';

/**
 * The compressed, bounded line store of one page: the chunks that hold the lines and the
 * budget are in chunk-store.ts, blob compression in blobs.ts, reading lines back in reply.ts;
 * this is the way in.
 *
 * Appends go through one ordered queue: `seq` is given when a line enters the store, so seq
 * order is arrival order even when a big blob is still being compressed, and an emptying
 * (`clear`) applies exactly between the lines queued before and after it.
 */

/** Bodies and payloads longer than this (characters) are stored as their own blob. */
export const INLINE_MAX_CHARS = 2048;
/**
 * Raw bytes waiting (blobs being compressed, lines queued behind a body still being read) beyond
 * which new lines are refused and counted as dropped: a page that streams faster than the
 * thread pool compresses, or behind a slow body, cannot make the queue grow without bound.
 */
const MAX_PENDING_BYTES = 64 * 1024 * 1024;
/** What a queued line is counted as, besides its content. */
const QUEUED_LINE_BYTES = 256;

interface LineOp {
  type: 'line';
  /** The line; null while a reservation waits for it. */
  entry: LineEntry | null;
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
  /** Applied to every URL, header value, body and text payload before it is stored. */
  redact?: (text: string) => string;
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

export class LineStore {
  readonly budget: number;
  private readonly maxReplyChars: number;
  private readonly redact: ((text: string) => string) | null;
  private readonly chunks: ChunkStore;
  private seq = 0;
  private queue: Op[] = [];
  private readonly blobs = new BlobCompressor();
  private waitingBytes = 0;
  private closed = false;

  constructor(opts: StoreOptions = {}) {
    this.budget = opts.budgetBytes ?? DEFAULT_BUDGET_BYTES;
    this.maxReplyChars = opts.maxReplyChars ?? DEFAULT_MAX_REPLY_CHARS;
    this.redact = opts.redact ?? null;
    this.chunks = new ChunkStore(this.budget);
  }

  /** Highest seq given so far (0 before the first line). */
  get mark(): number {
    return this.seq;
  }

  stats(): StoreStats {
    const pending = this.queue.filter((op) => op.type === 'line').length;
    const held = this.chunks.figures();
    return {
      bytes: held.bytes,
      budget: this.budget,
      lines: held.lines,
      chunks: held.chunks,
      dropped_lines: held.droppedLines,
      dropped_bytes: held.droppedBytes,
      pending_lines: pending,
      pending_bytes: this.blobs.pendingBytes + this.waitingBytes,
      mark: this.seq,
      raw_bytes_in: held.rawIn,
      compressed_bytes_out: held.compressedOut,
    };
  }

  /** Adds an HTTP line; `body` is the text body (already cut) or null. */
  appendHttp(line: NewHttpLine, body: string | null, tag: string | null = null): void {
    const [clean, text] = this.cleanHttp(line, body);
    this.enqueue({ l: 'h', f: clean }, text, 'utf8', tag);
  }

  /** Adds a WebSocket line; `payload` is text, or base64 when the line is binary. */
  appendWs(line: NewWsLine, payload: string | null): void {
    const r = this.redact;
    const clean = r ? { ...line, url: r(line.url) } : line;
    const text = r && payload !== null && !line.binary ? r(payload) : payload;
    this.enqueue({ l: 'w', f: clean }, text, line.binary ? 'base64' : 'utf8', null);
  }

  /** An HTTP line and its body with every secret taken out. */
  private cleanHttp(line: NewHttpLine, body: string | null): [NewHttpLine, string | null] {
    const r = this.redact;
    if (!r) return [line, body];
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(line.headers)) headers[k] = r(v);
    const clean = { ...line, url: r(line.url), headers, error: line.error && r(line.error) };
    return [clean, body === null ? null : r(body)];
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
    this.blobs.close();
    this.waitingBytes = 0;
    this.chunks.reset();
  }

  /**
   * Holds the next place in line for an HTTP line whose body is still being read: lines added
   * later wait behind it, so seq follows the order in which responses completed. Fill it (once)
   * or cancel it.
   */
  reserve(): Reservation {
    const op: LineOp = {
      type: 'line',
      entry: null,
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
        const [clean, text] = this.cleanHttp(line, body);
        op.entry = { l: 'h', f: clean };
        op.tag = tag;
        this.prepare(op, text, 'utf8');
        this.resize(op, text);
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

  /**
   * Lines with seq > `since`, filtered, as clients read them. Reads a snapshot taken at once
   * (`mark` is the highest seq at that moment); decoding yields to the event loop now and then.
   */
  async query(filter: QueryFilter): Promise<QueryResult> {
    const mark = this.seq;
    const snapshot = this.chunks.snapshot(filter.since);
    return assembleReply(snapshot, mark, filter, this.maxReplyChars);
  }

  private enqueue(
    entry: LineEntry,
    content: string | null,
    enc: Encoding,
    tag: string | null,
  ): void {
    if (this.closed) return;
    if (this.queue.length > 0 && this.blobs.pendingBytes + this.waitingBytes > MAX_PENDING_BYTES) {
      this.chunks.refused(content?.length ?? 0);
      return;
    }
    const op: LineOp = {
      type: 'line',
      entry,
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
    if (this.blobs.pendingBytes + raw.length > MAX_PENDING_BYTES) {
      // The page produces faster than the thread pool compresses: refuse rather than grow.
      this.chunks.refused(raw.length);
      op.skip = true;
      op.ready = true;
      return;
    }
    this.chunks.tookIn(raw.length);
    op.blob = this.blobs.start(raw, enc, (ok) => {
      // A blob that cannot be compressed (never with valid input) keeps its line, no content.
      if (!ok) op.blob = null;
      op.ready = true;
      this.drain();
    });
    // A small blob is compressed already; a big one is ready when the thread pool is through.
    op.ready = op.blob.data !== null;
  }

  private drain(): void {
    while (!this.closed) {
      const op = this.queue[0];
      if (!op?.ready) return;
      this.queue.shift();
      if (op.type === 'clear') {
        this.chunks.clear(op.keepTag, op.keep);
        continue;
      }
      this.waitingBytes -= op.size;
      // A reservation is ready only once filled (entry set) or given up (skip).
      if (!op.skip && op.entry) this.applyLine(op, op.entry);
    }
  }

  private applyLine(op: LineOp, entry: LineEntry): void {
    this.seq += 1;
    const rec: StoredRecord = { q: this.seq, ...entry };
    if (op.tag) rec.t = op.tag;
    if (op.blob?.data) {
      rec.b = this.chunks.addBlob(op.blob.data);
      if (op.blob.enc === 'base64') rec.e = 'b64';
    } else {
      rec.c = op.inline;
    }
    this.chunks.append(rec);
  }
}
