import zlib from 'node:zlib';
import { FAST_QUALITY, QUALITY, brotliOptions, compressSync, exact } from './brotli';

/**
 * Compressing the bodies and payloads that the line store keeps as their own blob: small ones
 * at once, big ones on libuv's thread pool so the event loop never stalls on a 2 MB body.
 */

/** Blobs up to this size are compressed at once on the event loop (well under a millisecond). */
const SYNC_COMPRESS_BYTES = 64 * 1024;
/** Raw bytes waiting for compression beyond which the faster, lighter quality is used. */
const FAST_QUALITY_ABOVE = 8 * 1024 * 1024;

export type Encoding = 'utf8' | 'base64';

export interface PendingBlob {
  enc: Encoding;
  data: Buffer | null;
  rawBytes: number;
}

export class BlobCompressor {
  private pending = 0;
  private closed = false;

  /** Raw bytes being compressed on the thread pool now. */
  get pendingBytes(): number {
    return this.pending;
  }

  /**
   * Compresses `raw`: a small blob has its `data` on return; a big one gets it later, and then
   * `done` is called (with false when it could not be compressed), never after `close`.
   */
  start(raw: Buffer, enc: Encoding, done: (ok: boolean) => void): PendingBlob {
    const quality = this.pending > FAST_QUALITY_ABOVE ? FAST_QUALITY : QUALITY;
    const blob: PendingBlob = { enc, data: null, rawBytes: raw.length };
    if (raw.length <= SYNC_COMPRESS_BYTES) {
      blob.data = compressSync(raw, quality);
      return blob;
    }
    this.pending += raw.length;
    zlib.brotliCompress(raw, brotliOptions(quality, raw.length), (err, out) => {
      if (this.closed) return;
      this.pending -= raw.length;
      if (!err) blob.data = exact(out);
      done(!err);
    });
    return blob;
  }

  /** Results that come in later are ignored. */
  close(): void {
    this.closed = true;
    this.pending = 0;
  }
}
