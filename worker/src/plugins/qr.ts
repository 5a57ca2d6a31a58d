import fs from 'node:fs';
import { prepareZXingModule, readBarcodes } from 'zxing-wasm/reader';

let ready: Promise<unknown> | null = null;

/**
 * The decoder's WebAssembly, loaded from the installed package: by default it would be fetched
 * from a CDN, and a worker must not reach out to anyone to read a picture.
 */
function prepare(): Promise<unknown> {
  if (!ready) {
    const file = fs.readFileSync(require.resolve('zxing-wasm/reader/zxing_reader.wasm'));
    const wasmBinary = file.buffer.slice(file.byteOffset, file.byteOffset + file.byteLength);
    ready = prepareZXingModule({ overrides: { wasmBinary }, fireImmediately: true }).catch(
      (err: unknown) => {
        ready = null;
        throw err;
      },
    );
  }
  return ready;
}

/** The texts of the QR codes in a PNG or JPEG, in the order the decoder reads them. */
export async function readQrCodes(image: Uint8Array): Promise<string[]> {
  await prepare();
  const found = await readBarcodes(image, {
    formats: ['QRCode'],
    tryHarder: true,
    maxNumberOfSymbols: 8,
  });
  return found.filter((b) => b.isValid).map((b) => b.text);
}
