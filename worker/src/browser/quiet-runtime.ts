import { Connection } from 'puppeteer-core';

/**
 * Keeps the Runtime domain off on every target of the worker's own browser.
 *
 * Puppeteer enables `Runtime` on each page, frame and worker it attaches to, to learn their
 * execution contexts. A page can tell: with Runtime on, the console API serialises its
 * arguments for the DevTools client, so an Error whose `stack` getter is watched and that is
 * passed to `console.debug` reveals the client (detector pages check exactly this). The worker
 * needs none of what Runtime brings: every in-page read and write runs in an isolated world of
 * its own, made with `Page.createIsolatedWorld` (which returns its context id directly), and
 * nothing calls puppeteer's `evaluate`, `$` or `waitForSelector` on a worker page. So the
 * command is answered here, at the one place puppeteer sends from, and never reaches Chromium.
 *
 * Only the connections of browsers launched through `quietLaunch` are affected: other
 * puppeteer connections in the same process (a test's observer) keep their Runtime.
 */

type RawSend = (
  this: object,
  callbacks: unknown,
  method: string,
  params: unknown,
  sessionId: string | undefined,
  options: unknown,
) => Promise<unknown>;

interface Patchable {
  _rawSend?: RawSend;
}

/** The connections answered here, decided at each connection's first command. */
const quiet = new WeakMap<object, boolean>();
/** Launches in flight: the next new connection is one of theirs. */
let pending = 0;
let installed = false;

function install(): void {
  if (installed) return;
  const proto = Connection.prototype as unknown as Patchable;
  const original = proto._rawSend;
  if (typeof original !== 'function') {
    // Fail loudly rather than leave Runtime on without anyone noticing.
    throw new Error('puppeteer-core has no Connection._rawSend; pin puppeteer-core 24');
  }
  proto._rawSend = function quietRawSend(callbacks, method, params, sessionId, options) {
    let isQuiet = quiet.get(this);
    if (isQuiet === undefined) {
      // A connection's first command is its browser-level set-up, sent during the launch.
      isQuiet = pending > 0;
      if (isQuiet) pending -= 1;
      quiet.set(this, isQuiet);
    }
    if (isQuiet && method === 'Runtime.enable' && sessionId !== undefined) {
      return Promise.resolve({});
    }
    return original.call(this, callbacks, method, params, sessionId, options);
  };
  installed = true;
}

/** Runs `launch` so that the browser it connects to never gets `Runtime.enable`. */
export async function quietLaunch<T>(launch: () => Promise<T>): Promise<T> {
  install();
  pending += 1;
  const before = pending;
  try {
    return await launch();
  } finally {
    // A launch that failed before connecting leaves its token unused: take it back.
    if (pending >= before) pending -= 1;
  }
}
