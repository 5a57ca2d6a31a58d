import type { Call } from '../browser/call';
import type { ManagedPage } from '../browser/managed-page';
import { capturePng } from '../browser/page-actions';
import { BrowserFailure } from '../errors';
import { evalIsolated } from '../browser/page-world';
import type { Viewport } from './answer';
import { pngSize } from './png';

export interface ViewportShot {
  png: Buffer;
  /** The CSS size the PNG covers: its pixel size divided by the device pixel ratio. */
  viewport: Viewport;
}

const round2 = (n: number): number => Math.round(n * 100) / 100;

function pixelRatioInPage(): number {
  return window.devicePixelRatio;
}

/**
 * A PNG of the viewport and the CSS size it covers, taken by a caller holding the page. The
 * size comes from the image itself (not clientWidth, which leaves out a scrollbar the image
 * includes), so the model's 0–1000 scale maps onto exactly the pixels it saw.
 */
export async function viewportShot(mp: ManagedPage, call: Call): Promise<ViewportShot> {
  // A background tab of a headed browser is not painted; a person looks at the page anyway.
  await mp.bringToFront(call);
  const png = Buffer.from(await capturePng(mp, call, false), 'base64');
  const dpr = await evalIsolated<unknown>(mp, call, pixelRatioInPage, []);
  const size = pngSize(png);
  if (!size || size.width === 0 || size.height === 0) {
    throw new BrowserFailure('The page screenshot is not a usable PNG', mp.id);
  }
  const ratio = typeof dpr === 'number' && dpr > 0 ? dpr : 1;
  return {
    png,
    viewport: { width: round2(size.width / ratio), height: round2(size.height / ratio) },
  };
}
