import { CDPSession, CDPSessionEvent } from 'puppeteer-core';
import type { Page } from 'puppeteer-core';
import { PuppeteerMoved, callPrivate, privateEvent, readPrivateString } from './private-access';

/**
 * A page's own DevTools session and the target it stands for. Puppeteer creates one session per
 * page and moves the page onto another when a prerendered page is activated; capture and input
 * must follow that session, not open a second one of their own (a second session would miss
 * the swap and show in the page's target list).
 */

function asSession(value: unknown, access: string): CDPSession {
  if (!(value instanceof CDPSession)) throw new PuppeteerMoved(access);
  return value;
}

/** Puppeteer's own session of the page (`Page._client()`), looked up anew at every use. */
export function pageSession(page: Page): CDPSession {
  return asSession(callPrivate(page, '_client', 'Page._client()'), 'Page._client()');
}

/** The id of the page's current target (`Target._targetId`): its main frame's id as well. */
export function pageTargetId(page: Page): string {
  return readPrivateString(page.target(), '_targetId', 'Target._targetId');
}

/**
 * Calls `listener` with the page's new session whenever puppeteer moves the page to another
 * target (a prerendered page activated by a click or a navigation). Puppeteer announces it on
 * the tab's session, the parent of the page's own (`CDPSession.parentSession()`), with an event
 * it keeps private (`CDPSessionEvent.Swapped`).
 */
export function onPageSessionSwap(page: Page, listener: (session: CDPSession) => void): void {
  const swapped = privateEvent(CDPSessionEvent, 'Swapped', 'CDPSessionEvent.Swapped');
  const parent = callPrivate(pageSession(page), 'parentSession', 'CDPSession.parentSession()');
  const tab = asSession(parent, 'CDPSession.parentSession()');
  tab.on(swapped, (session: unknown) => {
    if (session instanceof CDPSession) listener(session);
  });
}
