import QRCode from 'qrcode';
import { readQrCodes } from '../src/plugins/qr';
import type { BenchSection, Row } from './section';
import { median, percentile, range } from './stats';

/**
 * Section 7: reading a login QR code as `ctx.codes.readQr` does (zxing-wasm), on PNGs the size
 * of an element screenshot: the first call (the WebAssembly compiled) and then each call.
 */

const RUNS = 50;
/** A bank login's token, rendered at the sizes a login page shows it. */
const TEXT = 'BANKA-AUTH:7f3a9c2e-5b1d-4e8a-9f0c-2d6b8e4a1c73:1795608329';
const SCALES = [4, 8];

export const qrSection: BenchSection = {
  id: 'qr',
  title: 'QR code reading',
  async run(ctx): Promise<Row[]> {
    const rows: Row[] = [];
    const pngs = await Promise.all(
      SCALES.map(
        async (scale) => new Uint8Array(await QRCode.toBuffer(TEXT, { scale, margin: 4 })),
      ),
    );
    ctx.progress('qr: first decode');
    const t0 = performance.now();
    const first = await readQrCodes(pngs[0] as Uint8Array);
    const cold = performance.now() - t0;
    rows.push({
      key: 'qr.first_ms',
      label: 'first decode (WebAssembly compiled)',
      value: cold,
      unit: 'ms',
      detail: first[0] === TEXT ? 'read correctly' : `read ${JSON.stringify(first)}`,
    });
    for (const [i, png] of pngs.entries()) {
      ctx.progress(`qr: ${RUNS} decodes at scale ${SCALES[i]}`);
      const times: number[] = [];
      let right = 0;
      for (let n = 0; n < RUNS; n += 1) {
        const t = performance.now();
        const texts = await readQrCodes(png);
        times.push(performance.now() - t);
        if (texts[0] === TEXT) right += 1;
      }
      rows.push({
        key: `qr.decode_scale${SCALES[i]}_ms`,
        label: `decode, ${png.length} B PNG (scale ${SCALES[i]})`,
        value: median(times),
        unit: 'ms',
        digits: 2,
        detail: `p95 ${percentile(times, 95).toFixed(2)} ms, range ${range(times, 2)}, ${right}/${RUNS} right`,
      });
    }
    return rows;
  },
};
