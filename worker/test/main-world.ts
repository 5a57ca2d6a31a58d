import type { ManagedPage } from '../src/browser/managed-page';

/**
 * A test's own look into the page's main world (the page's globals, such as its event log),
 * on the page's session. The worker's browser never enables the Runtime domain, so puppeteer's
 * `evaluate` and `waitForFunction`, which wait for the execution contexts it reports, would
 * wait forever; `Runtime.evaluate` without a context id runs in the main world all the same.
 */
export async function inMainWorld<T>(mp: ManagedPage, code: string | (() => unknown)): Promise<T> {
  const expression = typeof code === 'string' ? code : `(${code.toString()})()`;
  const res = await mp.session.send('Runtime.evaluate', {
    expression,
    returnByValue: true,
    awaitPromise: true,
  });
  if (res.exceptionDetails) {
    throw new Error(res.exceptionDetails.exception?.description ?? res.exceptionDetails.text);
  }
  return res.result.value as T;
}

/** Polls `expression` in the main world until it is true, or fails after `timeoutMs`. */
export async function waitInMainWorld(
  mp: ManagedPage,
  expression: string,
  timeoutMs: number,
): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    if ((await inMainWorld<unknown>(mp, expression).catch(() => false)) === true) return;
    if (Date.now() > until)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${expression}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
