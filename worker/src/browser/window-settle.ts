import type { Browser } from 'puppeteer-core';
import type { WorkArea } from '@persona-browser/xvfb';
import { browserConnection } from './cdp/child-sessions';

interface Bounds {
  left?: number;
  top?: number;
  width?: number;
  height?: number;
}

const onArea = (b: Bounds, area: WorkArea): boolean =>
  b.left === area.x && b.top === area.y && b.width === area.width && b.height === area.height;

const pause = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * Xvfb runs no window manager: Chromium places and maximises its window itself, a moment after
 * it starts, and a page opened before that reads the window where it first appeared (seen: a
 * macOS desktop's window at the top of the screen, over its menu bar). So the start waits until
 * the browser's window lies on the work area, as the browser itself tells its pages, and sets
 * its bounds once when it does not within `patienceMs`. Gives the bounds it ended on when they
 * are still not the work area's (the caller says so), else null.
 */
export async function settleWindow(
  browser: Browser,
  area: WorkArea,
  patienceMs = 2_000,
): Promise<Bounds | null> {
  const { root } = await browserConnection(browser);
  const { targetInfos } = await root.send('Target.getTargets');
  const page = targetInfos.find((t) => t.type === 'page');
  if (!page) return null;
  const windowOf = () => root.send('Browser.getWindowForTarget', { targetId: page.targetId });
  const waitOnArea = async (ms: number): Promise<Bounds> => {
    const until = Date.now() + ms;
    for (;;) {
      const { bounds } = await windowOf();
      if (onArea(bounds, area) || Date.now() >= until) return bounds;
      await pause(100);
    }
  };
  const first = await waitOnArea(patienceMs);
  if (onArea(first, area)) return null;
  const { windowId } = await windowOf();
  // Bounds are only taken by a window in the normal state; one sized to the work area at its
  // corner is what a page sees of a maximised one.
  await root.send('Browser.setWindowBounds', { windowId, bounds: { windowState: 'normal' } });
  await root.send('Browser.setWindowBounds', {
    windowId,
    bounds: { left: area.x, top: area.y, width: area.width, height: area.height },
  });
  const last = await waitOnArea(patienceMs);
  return onArea(last, area) ? null : last;
}
