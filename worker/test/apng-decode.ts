import zlib from 'node:zlib';

/** One frame of an animated PNG as a viewer shows it: the whole canvas, RGB, and its delay. */
export interface ShownFrame {
  rgb: Buffer;
  delayMs: number;
}

export interface DecodedApng {
  width: number;
  height: number;
  plays: number;
  frames: ShownFrame[];
}

/** PNG's Paeth predictor. */
function paeth(a: number, b: number, c: number): number {
  const p = a + b - c;
  const pa = Math.abs(p - a);
  const pb = Math.abs(p - b);
  const pc = Math.abs(p - c);
  return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

/** Inflated scanlines of an 8-bit RGB image, unfiltered (every filter type read). */
function unfilter(data: Buffer, width: number, height: number): Buffer {
  const bpp = 3;
  const line = width * bpp;
  const out = Buffer.alloc(line * height);
  for (let y = 0; y < height; y++) {
    const type = data[y * (line + 1)] ?? 0;
    const src = y * (line + 1) + 1;
    const at = y * line;
    if (type === 0) {
      data.copy(out, at, src, src + line);
      continue;
    }
    if (type > 4) throw new Error(`bad filter ${type}`);
    for (let x = 0; x < line; x++) {
      const raw = data[src + x] ?? 0;
      const a = x >= bpp ? (out[at + x - bpp] ?? 0) : 0;
      const b = y > 0 ? (out[at - line + x] ?? 0) : 0;
      const c = x >= bpp && y > 0 ? (out[at - line + x - bpp] ?? 0) : 0;
      const pred = type === 1 ? a : type === 2 ? b : type === 3 ? (a + b) >> 1 : paeth(a, b, c);
      out[at + x] = (raw + pred) & 0xff;
    }
  }
  return out;
}

/**
 * Decodes an animated PNG (8-bit RGB, as the recorder writes it) into the frames a viewer
 * shows, checking chunk CRCs and sequence numbers: a test's own reading of the file.
 */
export function decodeApng(file: Buffer): DecodedApng {
  if (!file.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])))
    throw new Error('not a PNG');
  let width = 0;
  let height = 0;
  let plays = -1;
  let declared = -1;
  let seq = 0;
  type Ctl = {
    w: number;
    h: number;
    x: number;
    y: number;
    delayMs: number;
    dispose: number;
    blend: number;
  };
  const parts: Array<{ ctl: Ctl; data: Buffer[] }> = [];
  let off = 8;
  while (off < file.length) {
    const len = file.readUInt32BE(off);
    const type = file.toString('ascii', off + 4, off + 8);
    const data = file.subarray(off + 8, off + 8 + len);
    if (
      file.readUInt32BE(off + 8 + len) !==
      zlib.crc32(data, zlib.crc32(file.subarray(off + 4, off + 8)))
    )
      throw new Error(`bad CRC in ${type}`);
    off += 12 + len;
    if (type === 'IHDR') {
      width = data.readUInt32BE(0);
      height = data.readUInt32BE(4);
      if (data[8] !== 8 || data[9] !== 2 || data[12] !== 0) throw new Error('not 8-bit RGB');
    } else if (type === 'acTL') {
      declared = data.readUInt32BE(0);
      plays = data.readUInt32BE(4);
    } else if (type === 'fcTL') {
      if (data.readUInt32BE(0) !== seq++) throw new Error('fcTL out of sequence');
      const den = data.readUInt16BE(22) || 100;
      parts.push({
        ctl: {
          w: data.readUInt32BE(4),
          h: data.readUInt32BE(8),
          x: data.readUInt32BE(12),
          y: data.readUInt32BE(16),
          delayMs: (data.readUInt16BE(20) * 1000) / den,
          dispose: data[24] ?? 0,
          blend: data[25] ?? 0,
        },
        data: [],
      });
    } else if (type === 'IDAT') parts.at(-1)?.data.push(data);
    else if (type === 'fdAT') {
      if (data.readUInt32BE(0) !== seq++) throw new Error('fdAT out of sequence');
      parts.at(-1)?.data.push(data.subarray(4));
    } else if (type === 'IEND') break;
  }
  if (declared !== parts.length)
    throw new Error(`acTL says ${declared} frames, found ${parts.length}`);
  const canvas = Buffer.alloc(width * height * 3);
  const frames: ShownFrame[] = [];
  for (const { ctl, data } of parts) {
    if (ctl.dispose !== 0 || ctl.blend !== 0) throw new Error('unexpected dispose/blend');
    if (ctl.x + ctl.w > width || ctl.y + ctl.h > height) throw new Error('frame off the canvas');
    const px = unfilter(zlib.inflateSync(Buffer.concat(data)), ctl.w, ctl.h);
    for (let y = 0; y < ctl.h; y++)
      px.copy(canvas, ((ctl.y + y) * width + ctl.x) * 3, y * ctl.w * 3, (y + 1) * ctl.w * 3);
    frames.push({ rgb: Buffer.from(canvas), delayMs: ctl.delayMs });
  }
  return { width, height, plays, frames };
}

/** The colour at (x, y) of a decoded frame. */
export function pixelAt(
  d: DecodedApng,
  f: ShownFrame,
  x: number,
  y: number,
): [number, number, number] {
  const i = (y * d.width + x) * 3;
  return [f.rgb[i] ?? 0, f.rgb[i + 1] ?? 0, f.rgb[i + 2] ?? 0];
}

/**
 * The share of an image's pixels (every 8th in each direction) that are exactly `rgb`, the
 * image read through `at`.
 */
export function shareOf(
  width: number,
  height: number,
  at: (x: number, y: number) => [number, number, number],
  rgb: [number, number, number],
): number {
  let n = 0;
  let all = 0;
  for (let y = 0; y < height; y += 8)
    for (let x = 0; x < width; x += 8, all++) {
      const [r, g, b] = at(x, y);
      if (r === rgb[0] && g === rgb[1] && b === rgb[2]) n++;
    }
  return n / all;
}

/** The share of a frame's pixels (every 8th in each direction) that are exactly `rgb`. */
export function share(d: DecodedApng, f: ShownFrame, rgb: [number, number, number]): number {
  return shareOf(d.width, d.height, (x, y) => pixelAt(d, f, x, y), rgb);
}
