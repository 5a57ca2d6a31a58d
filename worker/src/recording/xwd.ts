/**
 * A screen as an XWD dump gives it (`xwd -root`, or the file Xvfb's `-fbdir` keeps): 32 bits a
 * pixel in either byte order, 8 bits a channel. Other layouts are refused, not guessed.
 */
export interface Screen {
  width: number;
  height: number;
  /** Bytes of one row in `pixels`. */
  stride: number;
  /** Byte offsets of red, green and blue within a 4-byte pixel. */
  r: number;
  g: number;
  b: number;
  pixels: Buffer;
}

export class XwdError extends Error {}

const HEADER_FIELDS = 25;
const ZPIXMAP = 2;

/** Byte offset of the channel `mask` selects within a 32-bit pixel stored in `lsbFirst` order. */
function channel(mask: number, lsbFirst: boolean): number {
  const shift = [0, 8, 16, 24].find((s) => mask >>> 0 === (0xff << s) >>> 0);
  if (shift === undefined) throw new XwdError(`unsupported colour mask ${mask.toString(16)}`);
  return lsbFirst ? shift / 8 : 3 - shift / 8;
}

export function parseXwd(dump: Buffer): Screen {
  if (dump.length < HEADER_FIELDS * 4) throw new XwdError('too short for an XWD header');
  const f = (i: number): number => dump.readUInt32BE(i * 4);
  const headerSize = f(0);
  const [version, format, , width, height] = [f(1), f(2), f(3), f(4), f(5)];
  const lsbFirst = f(7) === 0;
  const bitsPerPixel = f(11);
  const stride = f(12);
  const ncolors = f(19);
  if (version !== 7 || format !== ZPIXMAP || bitsPerPixel !== 32)
    throw new XwdError(
      `unsupported XWD (version ${version}, format ${format}, ${bitsPerPixel} bpp)`,
    );
  const start = headerSize + ncolors * 12;
  const pixels = dump.subarray(start, start + stride * height);
  if (pixels.length < stride * height) throw new XwdError('XWD pixels cut short');
  return {
    width,
    height,
    stride,
    r: channel(f(14), lsbFirst),
    g: channel(f(15), lsbFirst),
    b: channel(f(16), lsbFirst),
    pixels,
  };
}
