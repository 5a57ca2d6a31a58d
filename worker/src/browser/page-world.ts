import type { Call } from './call';
import { evaluateInWorld, PageScriptError } from './isolated-world';
import type { ManagedPage } from './managed-page';

export { PageScriptError };

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
  // What our own page function returned, by value: its caller names the shape it returns.
  return (await evaluateInWorld(mp, (command) => mp.cdp(call, command), expression, {
    userGesture: opts.userGesture ?? false,
    mayRetry: () => !call.signal.aborted,
  })) as T;
}
