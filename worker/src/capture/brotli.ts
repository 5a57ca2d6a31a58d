import { promisify } from 'node:util';
import zlib from 'node:zlib';

/** Brotli settings and buffer handling shared by the line store's chunks, blobs and replies. */

export const QUALITY = 5;
export const FAST_QUALITY = 1;
/** Blobs up to this size are decompressed at once on the event loop while answering a query. */
const SYNC_DECOMPRESS_BYTES = 16 * 1024;

const brotliDecompress = promisify(zlib.brotliDecompress);

export function brotliOptions(quality: number, size: number): zlib.BrotliOptions {
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
export function exact(buf: Buffer): Buffer {
  if (buf.byteOffset === 0 && buf.buffer.byteLength === buf.length) return buf;
  const copy = Buffer.allocUnsafeSlow(buf.length);
  buf.copy(copy);
  return copy;
}

/** Compresses on the event loop, into an exactly sized buffer. */
export function compressSync(raw: Buffer, quality: number): Buffer {
  return exact(zlib.brotliCompressSync(raw, brotliOptions(quality, raw.length)));
}

/** Small blobs are decompressed at once, big ones on libuv's thread pool. */
export async function decompress(blob: Buffer): Promise<Buffer> {
  return blob.length <= SYNC_DECOMPRESS_BYTES
    ? zlib.brotliDecompressSync(blob)
    : await brotliDecompress(blob);
}
