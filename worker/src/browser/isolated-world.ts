import type { CDPSession } from 'puppeteer-core';
import { errorMessage } from '../errors';

export class PageScriptError extends Error {}

/** What a world is made in: the page's current document and the session that drives it. */
export interface WorldHost {
  readonly url: string;
  readonly session: CDPSession;
}

/** Sends one command on the page's session, however the caller bounds it. */
export type WorldSend = <R>(command: (session: CDPSession) => Promise<R>) => Promise<R>;

/**
 * Evaluates `expression` in the page's isolated world and returns its value; a world that a
 * navigation destroyed meanwhile is made again once. The page shares the DOM with the world
 * but not its JavaScript globals, so its own scripts can neither see nor hook what runs here.
 */
export async function evaluateInWorld(
  host: WorldHost,
  send: WorldSend,
  expression: string,
  opts: { userGesture?: boolean; mayRetry?: () => boolean } = {},
): Promise<unknown> {
  for (let attempt = 0; ; attempt += 1) {
    const contextId = await isolatedContext(host, send, attempt > 0);
    try {
      const res = await send((s) =>
        s.send('Runtime.evaluate', {
          expression,
          contextId,
          returnByValue: true,
          awaitPromise: true,
          userGesture: opts.userGesture ?? false,
        }),
      );
      if (res.exceptionDetails) {
        const why = res.exceptionDetails.exception?.description ?? res.exceptionDetails.text;
        throw new PageScriptError(String(why).split('\n')[0]);
      }
      return res.result.value;
    } catch (err) {
      const stale = /context|Cannot find|destroyed/i.test(errorMessage(err));
      const retry = opts.mayRetry?.() ?? true;
      if (err instanceof PageScriptError || !retry || !stale || attempt >= 1) throw err;
    }
  }
}

/** The world last made per page, for the document (url) and session it was made in. */
const worlds = new WeakMap<WorldHost, { url: string; session: unknown; contextId: number }>();

async function isolatedContext(host: WorldHost, send: WorldSend, fresh: boolean): Promise<number> {
  const known = worlds.get(host);
  const url = host.url;
  const session = host.session;
  if (known && !fresh && known.url === url && known.session === session) return known.contextId;
  const tree = await send((s) => s.send('Page.getFrameTree'));
  const world = await send((s) =>
    s.send('Page.createIsolatedWorld', {
      frameId: tree.frameTree.frame.id,
      worldName: 'persona-browser',
    }),
  );
  worlds.set(host, { url, session, contextId: world.executionContextId });
  return world.executionContextId;
}
