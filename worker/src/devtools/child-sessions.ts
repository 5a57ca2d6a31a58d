import { CDPSession, CDPSessionEvent } from 'puppeteer-core';
import type { Browser, Connection } from 'puppeteer-core';
import { pageSession } from './page-session';
import { PuppeteerMoved, callPrivate, privateEvent } from './private-access';

/**
 * The browser's DevTools connection and the sessions puppeteer attaches on it, for the hooks
 * that must act on a target before its first line of script runs (workers held at start).
 */

/** A browser-level session of the browser's own, and the connection every session lives on. */
export async function browserConnection(
  browser: Browser,
): Promise<{ root: CDPSession; connection: Connection }> {
  const root = await browser.target().createCDPSession();
  const connection = root.connection();
  if (!connection) throw new Error('the browser session has no connection: the browser is gone');
  return { root, connection };
}

/**
 * The sessions puppeteer holds on the browser's open tabs (`Page._client()`, kept private): a
 * tab's workers attach under its session, so a hook on sessions to come must be put on these
 * too (the browser's startup tab, whose session is as old as the connection).
 */
export async function tabSessions(browser: Browser): Promise<CDPSession[]> {
  return (await browser.pages()).map(pageSession);
}

/**
 * Calls `listener` for each target puppeteer auto-attaches anywhere on `connection`, with the
 * target's type as DevTools names it ("worker" for a dedicated worker, which puppeteer's public
 * `Target.type()` folds into "other"), at the moment puppeteer holds it paused: the listener's
 * commands reach the target before it runs. Puppeteer announces that moment on the parent
 * session with an event it keeps private (`CDPSessionEvent.Ready`), and keeps the raw target
 * info private as well (`Target._getTargetInfo()`). Sessions attached from now on are watched,
 * and the already attached ones given in `attached` (tabSessions).
 */
export function onChildSessionReady(
  connection: Connection,
  listener: (child: CDPSession, type: string) => void,
  attached: readonly CDPSession[] = [],
): void {
  const ready = privateEvent(CDPSessionEvent, 'Ready', 'CDPSessionEvent.Ready');
  const watch = (session: CDPSession): void => {
    session.on(ready, (child: unknown) => {
      if (!(child instanceof CDPSession)) return;
      let type: string;
      try {
        type = targetTypeOf(child);
      } catch (err) {
        // A moved private part must be seen; a child puppeteer has no target for is skipped.
        if (err instanceof PuppeteerMoved) throw err;
        return;
      }
      listener(child, type);
    });
  };
  connection.on(CDPSessionEvent.SessionAttached, watch);
  for (const session of attached) watch(session);
}

/** The DevTools target type of the target a session is attached to. */
export function targetTypeOf(session: CDPSession): string {
  const target = callPrivate(session, 'target', 'CDPSession.target()');
  if (typeof target !== 'object' || target === null)
    throw new PuppeteerMoved('CDPSession.target()');
  const info = callPrivate(target, '_getTargetInfo', 'Target._getTargetInfo()');
  const type: unknown =
    typeof info === 'object' && info !== null ? Reflect.get(info, 'type') : null;
  if (typeof type !== 'string') throw new PuppeteerMoved('Target._getTargetInfo()');
  return type;
}
