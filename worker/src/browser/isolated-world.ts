import type { CDPSession } from 'puppeteer-core';
import { isRecord } from '@persona-browser/service-kit';
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
export function evaluateInWorld(
  host: WorldHost,
  send: WorldSend,
  expression: string,
  opts: { userGesture?: boolean; mayRetry?: () => boolean } = {},
): Promise<unknown> {
  return inWorld(
    host,
    send,
    (contextId) => evaluateIn(send, contextId, expression, opts.userGesture ?? false),
    opts.mayRetry,
  );
}

/**
 * Runs `use` with the id of the page's isolated world; when the world turns out to be gone (a
 * navigation destroyed it meanwhile), it is made again and `use` runs once more.
 */
export async function inWorld<T>(
  host: WorldHost,
  send: WorldSend,
  use: (contextId: number) => Promise<T>,
  mayRetry: () => boolean = () => true,
): Promise<T> {
  for (let attempt = 0; ; attempt += 1) {
    const contextId = await isolatedContext(host, send, attempt > 0);
    try {
      return await use(contextId);
    } catch (err) {
      const stale = /context|Cannot find|destroyed/i.test(errorMessage(err));
      if (err instanceof PageScriptError || !mayRetry() || !stale || attempt >= 1) throw err;
    }
  }
}

/** `expression`'s value in the world `contextId`, returned by value. */
export async function evaluateIn(
  send: WorldSend,
  contextId: number,
  expression: string,
  userGesture = false,
): Promise<unknown> {
  const res = await send((s) =>
    s.send('Runtime.evaluate', {
      expression,
      contextId,
      returnByValue: true,
      awaitPromise: true,
      userGesture,
    }),
  );
  return evaluatedValue(res);
}

/** The value of a `Runtime.evaluate` result; what the script threw, as a PageScriptError. */
export function evaluatedValue(res: unknown): unknown {
  if (!isRecord(res)) throw new Error('Runtime.evaluate gave no result');
  const details = res.exceptionDetails;
  if (isRecord(details)) {
    const exception = details.exception;
    const described = isRecord(exception) ? exception.description : undefined;
    const why = typeof described === 'string' ? described : String(details.text);
    throw new PageScriptError(why.split('\n')[0]);
  }
  return isRecord(res.result) ? res.result.value : undefined;
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
