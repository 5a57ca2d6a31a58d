import type { Response } from 'express';

/**
 * Runs `before` once, right before the response is handed over, and `done` right after it (so
 * the client does not wait for it), whether or not the socket is alive. Several listeners may
 * wrap the same response (the request log, the call metrics): each runs once.
 */
export function onResponseEnd(res: Response, before: () => void, done: () => void): void {
  // Not the `finish` or `close` events: `finish` never comes once the client hung up, and
  // `close` comes as it hangs up, long before the work ends and the status is known.
  const end = res.end.bind(res);
  let called = false;
  const wrapped = (...args: Parameters<typeof end>): Response => {
    if (called) return end(...args);
    called = true;
    before();
    try {
      return end(...args);
    } finally {
      done();
    }
  };
  // end() is overloaded; the wrapper passes whatever it is given on unchanged, which one
  // signature cannot say: asserted to be end() itself.
  res.end = wrapped as typeof res.end;
}
