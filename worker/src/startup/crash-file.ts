import fs from 'node:fs';
import { ProtocolError } from 'puppeteer-core';

/** How often the file is looked for. */
const POLL_MS = 200;

/**
 * For tests only, never a setting (README does not list it): `PB_TEST_CRASH_FILE` names a
 * file, and once that file appears the worker deletes it and throws from a timer, a genuine
 * uncaught exception, so a test can watch the worker end on one (worker/test/worker-exit.test.ts).
 * A file holding `page` makes a page's rejection instead, unhandled: the worker goes on.
 * Without the variable nothing is looked for. The timer never keeps the worker alive.
 */
export function crashOnFile(file: string | undefined): void {
  if (!file) return;
  const timer = setInterval(() => {
    if (!fs.existsSync(file)) return;
    clearInterval(timer);
    const what = fs.readFileSync(file, 'utf8').trim();
    fs.rmSync(file, { force: true });
    // `page`: a rejection of a page gone away, left unhandled (as puppeteer leaves some).
    if (what === 'page') {
      void Promise.reject(new ProtocolError('Protocol error (Test.call): Target closed'));
      return;
    }
    throw new Error('test crash: PB_TEST_CRASH_FILE');
  }, POLL_MS);
  timer.unref();
}
