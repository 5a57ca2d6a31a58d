import { promisify } from 'node:util';
import zlib from 'node:zlib';
import type { Screen } from './xwd';

const deflate = promisify(zlib.deflate);

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

function chunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'ascii');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(zlib.crc32(data, zlib.crc32(head.subarray(4))), 0);
  return Buffer.concat([head, data, crc]);
}

/** A rectangle of the screen. */
export interface Region {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** The rectangle holding every pixel that differs between two screens of one size; null: none. */
export function changedRegion(prev: Screen, next: Screen): Region | null {
  const { stride, height, width } = next;
  const row = (s: Screen, y: number): Buffer =>
    s.pixels.subarray(y * stride, y * stride + width * 4);
  let top = 0;
  while (top < height && row(prev, top).equals(row(next, top))) top++;
  if (top === height) return null;
  let bottom = height - 1;
  while (bottom > top && row(prev, bottom).equals(row(next, bottom))) bottom--;
  let left = width;
  let right = -1;
  const a = prev.pixels;
  const b = next.pixels;
  // Only the three colour bytes count: the fourth is padding.
  const same = (i: number): boolean =>
    a[i + next.r] === b[i + next.r] &&
    a[i + next.g] === b[i + next.g] &&
    a[i + next.b] === b[i + next.b];
  for (let y = top; y <= bottom; y++) {
    const base = y * stride;
    let x = 0;
    while (x < left && same(base + x * 4)) x++;
    if (x < left) left = x;
    let z = width - 1;
    while (z > right && same(base + z * 4)) z--;
    if (z > right) right = z;
  }
  if (right < left) return null;
  return { x: left, y: top, width: right - left + 1, height: bottom - top + 1 };
}

/** The region's pixels as PNG scanlines (RGB, filter None), deflated. */
function scanlines(s: Screen, r: Region): Promise<Buffer> {
  const line = 1 + r.width * 3;
  const out = Buffer.alloc(line * r.height);
  for (let y = 0; y < r.height; y++) {
    let o = y * line + 1;
    let i = (r.y + y) * s.stride + r.x * 4;
    for (let x = 0; x < r.width; x++, i += 4) {
      out[o++] = s.pixels[i + s.r] ?? 0;
      out[o++] = s.pixels[i + s.g] ?? 0;
      out[o++] = s.pixels[i + s.b] ?? 0;
    }
  }
  return deflate(out, { level: 6 });
}

interface Frame {
  region: Region;
  data: Buffer;
  /** Epoch ms it was taken. */
  at: number;
}

/**
 * An animated PNG built frame by frame: the first frame is the whole screen, each next one only
 * the rectangle that changed, shown over the last (browsers play it in an <img>). A screen that
 * did not change adds no frame: the last one is shown longer.
 */
export class ApngWriter {
  private prev: Screen | null = null;
  private readonly frames: Frame[] = [];
  private bytes = 0;
  /** When the screen was last taken, changed or not. */
  private lastAt = 0;

  get frameCount(): number {
    return this.frames.length;
  }

  /** Bytes of frame data so far (what `finish` writes, less a few dozen a frame). */
  get size(): number {
    return this.bytes;
  }

  get screenSize(): { width: number; height: number } | null {
    return this.prev && { width: this.prev.width, height: this.prev.height };
  }

  /**
   * Adds the screen as taken at `at`: `unchanged` if it did not change, `refused` (nothing kept)
   * when `admit` refuses the new frame's bytes (the recording's memory is spent), else `added`.
   */
  async add(
    s: Screen,
    at: number,
    admit: (bytes: number) => boolean = () => true,
  ): Promise<'added' | 'unchanged' | 'refused'> {
    const prev = this.prev;
    let region: Region | null = { x: 0, y: 0, width: s.width, height: s.height };
    if (prev && prev.width === s.width && prev.height === s.height) region = changedRegion(prev, s);
    else if (prev) throw new Error('the screen changed size during a recording');
    if (!region) {
      this.prev = s;
      this.lastAt = at;
      return 'unchanged';
    }
    const data = await scanlines(s, region);
    if (!admit(data.length)) return 'refused';
    this.prev = s;
    this.lastAt = at;
    this.frames.push({ region, data, at });
    this.bytes += data.length;
    return 'added';
  }

  /** Lets go of every frame (once the file is written, or will not be). */
  discard(): void {
    this.frames.length = 0;
    this.bytes = 0;
    this.prev = null;
  }

  /** The file: each frame shown until the next, the last until the screen was last taken and
   * `lastMs` more. */
  finish(lastMs: number): Buffer {
    const first = this.frames[0];
    if (!first) throw new Error('no frame');
    const { width, height } = first.region;
    const ihdr = Buffer.alloc(13);
    ihdr.writeUInt32BE(width, 0);
    ihdr.writeUInt32BE(height, 4);
    ihdr[8] = 8; // bits a channel
    ihdr[9] = 2; // RGB
    const actl = Buffer.alloc(8);
    actl.writeUInt32BE(this.frames.length, 0);
    actl.writeUInt32BE(0, 4); // plays forever
    const parts = [SIGNATURE, chunk('IHDR', ihdr), chunk('acTL', actl)];
    let seq = 0;
    this.frames.forEach((f, i) => {
      const next = this.frames[i + 1];
      const shown = next ? next.at - f.at : this.lastAt - f.at + lastMs;
      const delay = Math.max(1, Math.min(65_535, shown));
      const fctl = Buffer.alloc(26);
      fctl.writeUInt32BE(seq++, 0);
      fctl.writeUInt32BE(f.region.width, 4);
      fctl.writeUInt32BE(f.region.height, 8);
      fctl.writeUInt32BE(f.region.x, 12);
      fctl.writeUInt32BE(f.region.y, 16);
      fctl.writeUInt16BE(delay, 20);
      fctl.writeUInt16BE(1000, 22);
      // dispose: none; blend: source (the region's pixels replace what was there).
      parts.push(chunk('fcTL', fctl));
      if (i === 0) parts.push(chunk('IDAT', f.data));
      else {
        const head = Buffer.alloc(4);
        head.writeUInt32BE(seq++, 0);
        parts.push(chunk('fdAT', Buffer.concat([head, f.data])));
      }
    });
    parts.push(chunk('IEND', Buffer.alloc(0)));
    return Buffer.concat(parts);
  }
}
