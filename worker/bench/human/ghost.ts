import { createCursor } from 'ghost-cursor';
import type { Page } from 'puppeteer-core';
import type { Driver } from './session';

/**
 * The competitor: ghost-cursor on a puppeteer page, with its default options except
 * `moveDelay: 0` (its clicks otherwise idle up to 2 s afterwards, which no figure sees but the
 * run time does). It has no typing, so typing is puppeteer's `page.type` with a fixed `delay`.
 * Scrolling is ghost-cursor's own `scroll`.
 */

export const TYPE_DELAY_MS = 100;

export function ghostDriver(page: Page): Driver {
  // ghost-cursor's types name puppeteer's Page; puppeteer-core's is the same class.
  const cursor = createCursor(page);
  const noIdle = { moveDelay: 0 };
  return {
    act: async (t) => {
      if (t.kind === 'hover') {
        await cursor.moveTo({ x: t.x, y: t.y }, noIdle);
      } else if (t.kind === 'click-position') {
        await cursor.moveTo({ x: t.x, y: t.y }, noIdle);
        await cursor.click(undefined, noIdle);
      } else {
        await cursor.click('#target', noIdle);
      }
    },
    type: async (selector, text) => {
      await cursor.click(selector, noIdle);
      await page.type(selector, text, { delay: TYPE_DELAY_MS });
    },
    scroll: (distance) => cursor.scroll({ y: distance }),
  };
}
