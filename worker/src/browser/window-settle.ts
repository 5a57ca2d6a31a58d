import type { Browser, CDPSession } from 'puppeteer-core';
import type { WorkArea } from '@persona-browser/xvfb';
import { browserConnection } from '../devtools/child-sessions';

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
 * How often the window is read while it is not on the work area yet: one read is one command
 * to the browser process, and the start waits for no more than this after the window is there.
 */
const POLL_MS = 20;

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
  const windowId = await windowOfTabs(root);
  if (windowId === null) return null;
  const waitOnArea = async (ms: number): Promise<Bounds> => {
    const until = Date.now() + ms;
    for (;;) {
      const { bounds } = await root.send('Browser.getWindowBounds', { windowId });
      if (onArea(bounds, area) || Date.now() >= until) return bounds;
      await pause(POLL_MS);
    }
  };
  const first = await waitOnArea(patienceMs);
  if (onArea(first, area)) return null;
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

/**
 * The window of the browser's tabs (it has one: the start opens no other), found through the
 * first tab that is still there when asked: set-up running beside this one may open and close a
 * tab of its own meanwhile. Null when there is no tab.
 */
async function windowOfTabs(root: CDPSession): Promise<number | null> {
  const { targetInfos } = await root.send('Target.getTargets');
  const pages = targetInfos.filter((t) => t.type === 'page');
  for (const [i, page] of pages.entries()) {
    try {
      return (await root.send('Browser.getWindowForTarget', { targetId: page.targetId })).windowId;
    } catch (err) {
      // Gone since it was listed: the next one; the last one's failure is the answer.
      if (i === pages.length - 1) throw err;
    }
  }
  return null;
}
