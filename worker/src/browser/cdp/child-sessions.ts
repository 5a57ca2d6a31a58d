import { CDPSession, CDPSessionEvent } from 'puppeteer-core';
import type { Browser, Connection } from 'puppeteer-core';
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
 * Calls `listener` for each target puppeteer auto-attaches anywhere on `connection`, with the
 * target's type as DevTools names it ("worker" for a dedicated worker, which puppeteer's public
 * `Target.type()` folds into "other"), at the moment puppeteer holds it paused: the listener's
 * commands reach the target before it runs. Puppeteer announces that moment on the parent
 * session with an event it keeps private (`CDPSessionEvent.Ready`), and keeps the raw target
 * info private as well (`Target._getTargetInfo()`).
 */
export function onChildSessionReady(
  connection: Connection,
  listener: (child: CDPSession, type: string) => void,
): void {
  const ready = privateEvent(CDPSessionEvent, 'Ready', 'CDPSessionEvent.Ready');
  connection.on(CDPSessionEvent.SessionAttached, (session) => {
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
  });
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
