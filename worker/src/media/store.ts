import crypto from 'node:crypto';
import { safeContentType, safeFilename } from './headers';

export interface MediaStoreOptions {
  /** An unclaimed file is dropped this long after it was stored. */
  ttlMs: number;
  /** The most bytes that unclaimed files may hold together. */
  capBytes: number;
}

/** A stored file; `filename` and `contentType` are already safe to put in headers. */
export interface MediaItem {
  readonly bytes: Buffer;
  readonly filename: string;
  readonly contentType: string;
}

/** What a plugin hands back to its client. */
export interface MediaLink {
  token: string;
  /** Relative: `/api/v1/media/{token}`. */
  media_url: string;
}

export const MEDIA_PATH = '/api/v1/media';
/** 192 random bits; base64url makes that 32 characters. */
const TOKEN_BYTES = 24;
/** setTimeout's longest delay; a longer ttl is waited out in steps. */
const MAX_TIMER_MS = 2 ** 31 - 1;

const mib = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(1)} MB`;

/** A put that would take the unclaimed files over the cap. Nothing was stored. */
export class MediaCapExceeded extends Error {
  constructor(
    readonly requestedBytes: number,
    readonly usedBytes: number,
    readonly capBytes: number,
  ) {
    super(
      `Media store full: a file of ${requestedBytes} bytes would exceed the cap of ` +
        `${capBytes} bytes (${mib(capBytes)}) for unclaimed files; ` +
        `${usedBytes} bytes (${mib(usedBytes)}) are in use`,
    );
    this.name = 'MediaCapExceeded';
  }
}

interface Entry {
  item: MediaItem;
  /** On the `performance.now()` clock, which wall-clock changes do not move. */
  expiresAt: number;
  timer: NodeJS.Timeout;
}

/**
 * Files that plugins produced, held in memory until their one download. Each file is
 * addressed by an unguessable token, served once, and dropped unclaimed after `ttlMs`. The
 * store is the only owner of the bytes, and its count of them is exact: a download, an expiry
 * and `close()` all give them back.
 */
export class MediaStore {
  private readonly entries = new Map<string, Entry>();
  private usedBytes = 0;

  constructor(readonly opts: MediaStoreOptions) {
    if (!Number.isFinite(opts.ttlMs) || opts.ttlMs <= 0)
      throw new RangeError(`media ttlMs must be a positive number, got ${opts.ttlMs}`);
    if (!Number.isSafeInteger(opts.capBytes) || opts.capBytes < 0)
      throw new RangeError(`media capBytes must be a whole number >= 0, got ${opts.capBytes}`);
  }

  /**
   * Stores `bytes` (kept as given, not copied: do not change the buffer afterwards) and returns
   * the one-shot link. Throws MediaCapExceeded, storing nothing, when the file does not fit.
   */
  put(bytes: Buffer, filename: string, contentType: string): MediaLink {
    this.sweep();
    if (this.usedBytes + bytes.length > this.opts.capBytes)
      throw new MediaCapExceeded(bytes.length, this.usedBytes, this.opts.capBytes);
    let token: string;
    do token = crypto.randomBytes(TOKEN_BYTES).toString('base64url');
    while (this.entries.has(token));
    const item: MediaItem = {
      bytes,
      filename: safeFilename(filename),
      contentType: safeContentType(contentType),
    };
    const expiresAt = performance.now() + this.opts.ttlMs;
    this.entries.set(token, { item, expiresAt, timer: this.arm(token, this.opts.ttlMs) });
    this.usedBytes += bytes.length;
    return { token, media_url: `${MEDIA_PATH}/${token}` };
  }

  /** The file, removed in the same step (a second take gets null); null if unknown or expired. */
  take(token: string): MediaItem | null {
    const entry = this.live(token);
    if (!entry) return null;
    this.drop(token, entry);
    return entry.item;
  }

  /** The file without claiming it (a HEAD request); null if unknown or expired. */
  peek(token: string): MediaItem | null {
    return this.live(token)?.item ?? null;
  }

  stats(): { files: number; bytes: number; capBytes: number } {
    return { files: this.entries.size, bytes: this.usedBytes, capBytes: this.opts.capBytes };
  }

  /** Drops every file and timer. The store stays usable; its old links are dead. */
  close(): void {
    for (const entry of this.entries.values()) clearTimeout(entry.timer);
    this.entries.clear();
    this.usedBytes = 0;
  }

  /** The entry if it is still within its ttl; an overdue one is dropped now, timer or not. */
  private live(token: string): Entry | undefined {
    const entry = this.entries.get(token);
    if (!entry) return undefined;
    if (performance.now() < entry.expiresAt) return entry;
    this.drop(token, entry);
    return undefined;
  }

  /**
   * Drops overdue files whose timers have not run yet (a busy event loop), so that a put is
   * measured against what is really claimable. Every file has the same ttl, so insertion order
   * is expiry order and the walk stops at the first live one.
   */
  private sweep(): void {
    const now = performance.now();
    for (const [token, entry] of this.entries) {
      if (now < entry.expiresAt) break;
      this.drop(token, entry);
    }
  }

  private drop(token: string, entry: Entry): void {
    clearTimeout(entry.timer);
    this.entries.delete(token);
    this.usedBytes -= entry.item.bytes.length;
  }

  /** Unref'd: a pending expiry never keeps the process alive. */
  private arm(token: string, delayMs: number): NodeJS.Timeout {
    const timer = setTimeout(() => this.expire(token), Math.min(delayMs, MAX_TIMER_MS));
    timer.unref();
    return timer;
  }

  private expire(token: string): void {
    const entry = this.entries.get(token);
    if (!entry) return;
    // Timers may run a hair early on their own millisecond clock, and a long ttl takes steps.
    const left = entry.expiresAt - performance.now();
    if (left > 0) entry.timer = this.arm(token, Math.ceil(left));
    else this.drop(token, entry);
  }
}
