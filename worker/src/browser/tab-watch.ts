import type { Browser, CDPSession, Target } from 'puppeteer-core';
import { TargetType } from 'puppeteer-core';
import { pageSession } from '../devtools/page-session';
import { PuppeteerMoved, callPrivate, readPrivateString } from '../devtools/private-access';

/**
 * Which tab of the browser's window is in front, and which tabs open, as the browser itself
 * tells them: for keeping a person who may drive one page on that page (live/confine.ts).
 */

/** A tab the browser opened: by a page (window.open, a link's target), a person, or the pool. */
export interface OpenedTab {
  targetId: string;
  /** The tab whose page opened it, else null (the browser's own new tab, the pool's). */
  openerId: string | null;
  /** Puppeteer's session of the tab's page once it is made; null when the tab went first. */
  session(): Promise<CDPSession | null>;
  close(): Promise<void>;
}

/**
 * Calls `listener` for each tab `browser` opens from now on, as soon as puppeteer announces it
 * (a prerendered page is no tab until it replaces one: puppeteer does not announce it); returns
 * the unsubscribe.
 */
export function onTabOpened(browser: Browser, listener: (tab: OpenedTab) => void): () => void {
  const created = (target: Target): void => {
    if (target.type() !== TargetType.PAGE) return;
    const page = target.page().catch(() => null);
    listener({
      targetId: readPrivateString(target, '_targetId', 'Target._targetId'),
      openerId: openerIdOf(target),
      session: async () => {
        const p = await page;
        return p && !p.isClosed() ? pageSession(p) : null;
      },
      close: async () => {
        await (await page)?.close();
      },
    });
  };
  browser.on('targetcreated', created);
  return () => {
    browser.off('targetcreated', created);
  };
}

/** The opener's target id as DevTools names it (`Target._getTargetInfo().openerId`). */
function openerIdOf(target: Target): string | null {
  const info = callPrivate(target, '_getTargetInfo', 'Target._getTargetInfo()');
  if (typeof info !== 'object' || info === null)
    throw new PuppeteerMoved('Target._getTargetInfo()');
  const openerId: unknown = Reflect.get(info, 'openerId');
  return typeof openerId === 'string' && openerId ? openerId : null;
}

/**
 * Calls `onShown` whenever the tab of `session` comes to the front of its window, and once at
 * the start when it is there already. Chromium tells a screencast's client when its tab is shown
 * or hidden; a tab in the background draws nothing, so its screencast costs nothing, and frames
 * are never acknowledged, so a tab in front sends at most one (a few pixels wide). Resolves to
 * the stop.
 */
export async function watchShown(session: CDPSession, onShown: () => void): Promise<() => void> {
  const changed = (e: { visible: boolean }): void => {
    if (e.visible) onShown();
  };
  session.on('Page.screencastVisibilityChanged', changed);
  try {
    await session.send('Page.startScreencast', {
      format: 'jpeg',
      quality: 1,
      maxWidth: 8,
      maxHeight: 8,
    });
  } catch (err) {
    session.off('Page.screencastVisibilityChanged', changed);
    throw err;
  }
  return () => {
    session.off('Page.screencastVisibilityChanged', changed);
    session.send('Page.stopScreencast').catch(() => undefined);
  };
}
