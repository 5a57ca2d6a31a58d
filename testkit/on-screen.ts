import type { Frame, Page } from 'puppeteer-core';

/**
 * What a person sees of our pages, measured in the browser: whether an element is drawn at all
 * (the browser's own visibility check: display, visibility, opacity, an empty box), and the
 * boxes of elements to compare their places.
 */

export interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
  right: number;
  bottom: number;
}

/** True when the element exists and is drawn: not `display:none` (itself or an ancestor), visible, not see-through, with a box. */
export function shown(frame: Page | Frame, selector: string): Promise<boolean> {
  return frame.evaluate((sel: string) => {
    const e = document.querySelector(sel);
    if (!e) return false;
    const r = e.getBoundingClientRect();
    return (
      e.checkVisibility({ opacityProperty: true, visibilityProperty: true }) &&
      r.width > 0 &&
      r.height > 0
    );
  }, selector);
}

/** The texts of the elements matching `selector` that are drawn. */
export function shownTexts(frame: Page | Frame, selector: string): Promise<string[]> {
  return frame.evaluate((sel: string) => {
    return Array.from(document.querySelectorAll(sel))
      .filter((e) => {
        const r = e.getBoundingClientRect();
        const drawn = e.checkVisibility({ opacityProperty: true, visibilityProperty: true });
        return drawn && r.width > 0 && r.height > 0;
      })
      .map((e) => (e.textContent ?? '').trim());
  }, selector);
}

/** The boxes (page coordinates) of the elements matching `selector`, in document order. */
export function boxes(frame: Page | Frame, selector: string): Promise<Box[]> {
  return frame.evaluate((sel: string) => {
    return Array.from(document.querySelectorAll(sel)).map((e) => {
      const r = e.getBoundingClientRect();
      return {
        x: r.x + window.scrollX,
        y: r.y + window.scrollY,
        width: r.width,
        height: r.height,
        right: r.right + window.scrollX,
        bottom: r.bottom + window.scrollY,
      };
    });
  }, selector);
}

/** Elements matching `selector` whose text is cut (wider than the box that shows it). */
export function clipped(frame: Page | Frame, selector: string): Promise<string[]> {
  return frame.evaluate((sel: string) => {
    return Array.from(document.querySelectorAll<HTMLElement>(sel))
      .filter((e) => e.scrollWidth > e.clientWidth + 1)
      .map((e) => (e.textContent ?? '').trim());
  }, selector);
}

/** How much wider than the window the page is (0 when nothing sticks out sideways). */
export function sidewaysOverflow(frame: Page | Frame): Promise<number> {
  return frame.evaluate(() =>
    Math.max(0, document.documentElement.scrollWidth - document.documentElement.clientWidth),
  );
}

/** Two boxes share a row when they overlap vertically. */
export const shareRow = (a: Box, b: Box): boolean => a.y < b.bottom && b.y < a.bottom;

/**
 * Elements that stick out of the right edge of the box they are drawn in (each element matching
 * `boxSelector`), leaving out what is inside a box that scrolls sideways (`scrollers`): a
 * `tag#id.class` line for each.
 */
export function spillingOut(
  frame: Page | Frame,
  boxSelector: string,
  scrollers: string,
): Promise<string[]> {
  return frame.evaluate(
    (sel: string, scroll: string) => {
      const out: string[] = [];
      for (const box of Array.from(document.querySelectorAll(sel))) {
        const edge = box.getBoundingClientRect().right;
        for (const e of Array.from(box.querySelectorAll('*'))) {
          const r = e.getBoundingClientRect();
          if (r.width === 0 || r.right <= edge + 0.5 || e.closest(scroll)) continue;
          out.push(`${e.tagName.toLowerCase()}#${e.id}.${e.getAttribute('class') ?? ''}`);
        }
      }
      return out;
    },
    boxSelector,
    scrollers,
  );
}
