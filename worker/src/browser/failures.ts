import { ProtocolError, TimeoutError } from 'puppeteer-core';

/** Messages of browser-level failures that puppeteer raises as plain errors. */
const BROWSER_MESSAGES =
  /^net::ERR_|Execution context was destroyed|Cannot find context|frame (was|got) detached|detached Frame|Session closed|Target closed|Protocol error|Connection closed|Navigating frame/i;

/**
 * Whether an error came from the browser (a protocol error, a closed target, a failed or timed
 * out navigation): the API answers those with 200 `success: false`. Anything else is a fault of
 * ours, which must surface as a logged 500, never as a quiet `success: false`.
 */
export function isBrowserLevel(err: unknown): boolean {
  if (err instanceof ProtocolError || err instanceof TimeoutError) return true;
  return err instanceof Error && BROWSER_MESSAGES.test(err.message);
}
