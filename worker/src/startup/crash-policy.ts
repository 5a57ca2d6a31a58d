import { ProtocolError } from 'puppeteer-core';

/**
 * Whether an error nothing caught is one page's, not the worker's: a call to a page, frame or
 * session that went away meanwhile (puppeteer's protocol error "Target closed" or "Session
 * closed", its TargetCloseError, or its detached frame). Such
 * a rejection leaves the browser and every other page as they were. Puppeteer itself leaves
 * some unhandled: when a prerendered page is activated on a busy machine, its frame tree gives
 * up waiting for the swap after 100 ms and the swap's own calls then fail with nothing awaiting
 * them (seen in CI). The worker logs these and goes on; anything else still ends it.
 */
export function pageScoped(err: unknown): boolean {
  if (err instanceof ProtocolError && /: (Target|Session) closed\b/.test(err.message)) return true;
  return err instanceof Error && err.message.startsWith('Attempted to use detached Frame');
}
