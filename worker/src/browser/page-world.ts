import type { Call } from './call';
import type { ManagedPage } from './managed-page';

interface EvalResult {
  result: { value?: unknown; description?: string };
  exceptionDetails?: { text?: string; exception?: { description?: string } };
}

export class PageScriptError extends Error {}

/**
 * Runs our own in-page code in an isolated world: the page shares the DOM with it but not its
 * JavaScript globals, so a site that wraps `getBoundingClientRect` or `navigator.clipboard`
 * never sees us call them. The world is made once per document and made again after a
 * navigation replaced it.
 */
export async function evalIsolated<T>(
  mp: ManagedPage,
  call: Call,
  fn: (...args: never[]) => unknown,
  args: unknown[],
  opts: { userGesture?: boolean } = {},
): Promise<T> {
  const expression = `(${fn.toString()})(...${JSON.stringify(args)})`;
  for (let attempt = 0; ; attempt += 1) {
    const contextId = await isolatedContext(mp, call, attempt > 0);
    try {
      const res = (await mp.cdp(call, (s) =>
        s.send('Runtime.evaluate', {
          expression,
          contextId,
          returnByValue: true,
          awaitPromise: true,
          userGesture: opts.userGesture ?? false,
        }),
      )) as EvalResult;
      if (res.exceptionDetails) {
        const why = res.exceptionDetails.exception?.description ?? res.exceptionDetails.text;
        throw new PageScriptError(String(why).split('\n')[0]);
      }
      return res.result.value as T;
    } catch (err) {
      const stale = /context|Cannot find|destroyed/i.test((err as Error).message);
      if (err instanceof PageScriptError || call.signal.aborted || !stale || attempt >= 1)
        throw err;
    }
  }
}

/** The world last made per page, for the document (url) and session it was made in. */
const worlds = new WeakMap<ManagedPage, { url: string; session: unknown; contextId: number }>();

async function isolatedContext(mp: ManagedPage, call: Call, fresh: boolean): Promise<number> {
  const known = worlds.get(mp);
  const url = mp.url;
  const session = mp.session;
  if (known && !fresh && known.url === url && known.session === session) return known.contextId;
  const tree = await mp.cdp(call, (s) => s.send('Page.getFrameTree'));
  const world = await mp.cdp(call, (s) =>
    s.send('Page.createIsolatedWorld', {
      frameId: tree.frameTree.frame.id,
      worldName: 'persona-browser',
    }),
  );
  worlds.set(mp, { url, session, contextId: world.executionContextId });
  return world.executionContextId;
}
