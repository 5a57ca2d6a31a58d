import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import puppeteer, { CDPSession } from 'puppeteer-core';
import type { Browser, Page } from 'puppeteer-core';
import type { VirtualDisplay } from '@persona-browser/xvfb';
import { startXvfb } from '@persona-browser/xvfb';
import {
  browserConnection,
  onChildSessionReady,
  targetTypeOf,
} from '../src/devtools/child-sessions';
import { browserProcess, browserWire } from '../src/devtools/chromium-launcher';
import { ChromiumPipeTransport } from '../src/devtools/pipe-transport';
import { onPageSessionSwap, pageSession, pageTargetId } from '../src/devtools/page-session';
import { PuppeteerMoved, callPrivate } from '../src/devtools/private-access';
import { findBrowserBinary, launchBrowser } from '../src/browser/launch';

/**
 * The worker's DevTools adapter (worker/src/devtools/) against a real headed Chromium.
 *
 * The canaries: one test per private part of puppeteer the adapter reads, each named after it,
 * so that a puppeteer upgrade that moves one fails here by name. Then the connection's filter:
 * the worker's pages never get the Runtime domain, whatever else runs in the process.
 */

const binary = findBrowserBinary(process.env.CHROME_PATH ?? null);
let display: VirtualDisplay;
let server: http.Server;
let base: string;
/** Each request for /next, with its Sec-Purpose header (a prerender says so). */
const nextRequests: string[] = [];
const profiles: string[] = [];
const browsers: Browser[] = [];

/**
 * A page that tells whether a DevTools client serialises its console (Runtime on): the error's
 * stack is then read, through its getter or Error.prepareStackTrace, now or a moment later.
 */
const CONSOLE_PROBE = `<!doctype html><title>-</title><script>
  addEventListener('load', () => {
    let read = false;
    const previous = Error.prepareStackTrace;
    Error.prepareStackTrace = (error, frames) => { read = true; return String(error); };
    try { console.debug(new Error('probe')); } finally { Error.prepareStackTrace = previous; }
    const e = new Error('probe');
    Object.defineProperty(e, 'stack', { configurable: true, get() { read = true; return ''; } });
    console.debug(e);
    setTimeout(() => { document.title = 'stack read:' + read + ' webdriver:' + navigator.webdriver; }, 300);
  });
</script>`;

const PRERENDER_START = `<!doctype html><title>start</title>
<script type="speculationrules">{"prerender":[{"source":"list","urls":["/next"]}]}</script>
<a id="go" href="/next">next</a>`;

// The dedicated worker reports what it found set on its global before its first line ran.
const WORKER_PAGE = `<!doctype html><title>waiting</title><script>
  const w = new Worker('/worker.js');
  w.onmessage = (e) => { document.title = e.data; };
</script>`;
const WORKER_JS = `postMessage('marked:' + typeof self.__heldMark);`;

beforeAll(async () => {
  display = await startXvfb();
  server = http.createServer((req, res) => {
    const route = new URL(req.url ?? '/', 'http://x').pathname;
    if (route === '/next') nextRequests.push(String(req.headers['sec-purpose'] ?? ''));
    const bodies: Record<string, string> = {
      '/probe': CONSOLE_PROBE,
      '/start': PRERENDER_START,
      '/next': '<!doctype html><title>next</title>',
      '/workers': WORKER_PAGE,
      '/worker.js': WORKER_JS,
    };
    const type = route.endsWith('.js') ? 'text/javascript' : 'text/html; charset=utf-8';
    res.writeHead(200, { 'content-type': type, 'cache-control': 'no-store' });
    res.end(bodies[route] ?? '');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  base = `http://127.0.0.1:${port}`;
});

afterAll(async () => {
  for (const b of browsers) await b.close().catch(() => undefined);
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  await display?.stop();
  for (const p of profiles) fs.rmSync(p, { recursive: true, force: true });
});

function newProfile(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-cdp-'));
  profiles.push(dir);
  return dir;
}

/** Puppeteer's own switches for a browser on a DevTools pipe: a plain automated Chromium. */
function plainArgs(profile: string): string[] {
  const args = ['--remote-debugging-pipe'];
  if (process.getuid?.() === 0) args.push('--no-sandbox');
  return puppeteer.defaultArgs({ headless: false, userDataDir: profile, args });
}

async function workerBrowser(evasions?: readonly string[]): Promise<Browser> {
  const browser = await launchBrowser({
    executablePath: binary,
    profileDir: newProfile(),
    display: display.display,
    evasions,
  });
  browsers.push(browser);
  return browser;
}

/** The title of the page's current history entry, read in the browser: no script runs. */
async function titleOf(session: CDPSession): Promise<string> {
  const history = await session.send('Page.getNavigationHistory');
  return history.entries[history.currentIndex]?.title ?? '';
}

async function waitForTitle(session: CDPSession, wanted: RegExp): Promise<string> {
  const until = Date.now() + 15_000;
  let title = await titleOf(session);
  while (!wanted.test(title) && Date.now() < until) {
    await new Promise((r) => setTimeout(r, 50));
    title = await titleOf(session);
  }
  return title;
}

/** What the console probe page saw, on a new page of `browser`. */
async function probe(browser: Browser): Promise<string> {
  const page = await browser.newPage();
  try {
    await page.goto(`${base}/probe`, { waitUntil: 'load' });
    const session = await page.createCDPSession();
    const title = await waitForTitle(session, /^stack read/);
    await session.detach();
    return title;
  } finally {
    await page.close();
  }
}

describe('canaries: the private parts of puppeteer-core the adapter reads', () => {
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    browser = await workerBrowser();
    page = await browser.newPage();
  });
  afterAll(async () => {
    await page?.close().catch(() => undefined);
  });

  test('Page._client(): the session puppeteer drives the page with, the same at every read', async () => {
    const session = pageSession(page);
    expect(session).toBeInstanceOf(CDPSession);
    expect(pageSession(page)).toBe(session);
    const { targetInfo } = await session.send('Target.getTargetInfo');
    expect(targetInfo.type).toBe('page');
  });

  test("Target._targetId: the page's target, as the browser names it", async () => {
    const { targetInfo } = await pageSession(page).send('Target.getTargetInfo');
    expect(pageTargetId(page)).toBe(targetInfo.targetId);
    const tree = await pageSession(page).send('Page.getFrameTree');
    expect(tree.frameTree.frame.id).toBe(pageTargetId(page));
  });

  test('CDPSession.parentSession() and CDPSessionEvent.Swapped: an activated prerender moves the page to the session announced', async () => {
    // A page without the stealth evasions: puppeteer 24's swap adds their scripts again to the
    // page's main frame, which on a busy machine it has given up on 100 ms after the old session
    // ended; the swap then rejects with nothing awaiting it (the worker logs that and goes on,
    // startup/crash-policy.ts), which here would fail the test, not the parts it checks.
    const page = await (await workerBrowser([])).newPage();
    const first = pageSession(page);
    const targetBefore = pageTargetId(page);
    const swaps: CDPSession[] = [];
    onPageSessionSwap(page, (session) => swaps.push(session));
    // The browser may decline a prerender now and then: a few tries.
    for (let attempt = 0; attempt < 3 && swaps.length === 0; attempt += 1) {
      nextRequests.length = 0;
      await page.goto(`${base}/start`, { waitUntil: 'load' });
      const prerendered = Date.now() + 10_000;
      while (!nextRequests.some((p) => p.includes('prerender')) && Date.now() < prerendered) {
        await new Promise((r) => setTimeout(r, 100));
      }
      await new Promise((r) => setTimeout(r, 1_000));
      // Activated by a navigation the page itself starts, as a click on its link would.
      const world = await first.send('Page.createIsolatedWorld', {
        frameId: pageTargetId(page),
        worldName: 'canary',
      });
      await first
        .send('Runtime.evaluate', {
          contextId: world.executionContextId,
          expression: `document.getElementById('go').click()`,
          userGesture: true,
        })
        .catch(() => undefined);
      const shown = Date.now() + 10_000;
      while (swaps.length === 0 && Date.now() < shown) await new Promise((r) => setTimeout(r, 50));
    }
    expect(swaps).toHaveLength(1);
    expect(pageSession(page)).toBe(swaps[0]);
    expect(pageTargetId(page)).not.toBe(targetBefore);
    expect(await waitForTitle(pageSession(page), /^next$/)).toBe('next');
  });

  test('CDPSessionEvent.Ready, CDPSession.target() and Target._getTargetInfo(): a dedicated worker is announced while held, typed "worker"', async () => {
    const { root, connection } = await browserConnection(browser);
    const seen: string[] = [];
    onChildSessionReady(connection, (child, type) => {
      seen.push(`${type}/${targetTypeOf(child)}`);
      if (type !== 'worker') return;
      void child.send('Runtime.evaluate', { expression: 'self.__heldMark = 1' });
    });
    const workers = await browser.newPage();
    try {
      await workers.goto(`${base}/workers`, { waitUntil: 'load' });
      // The mark was set before the worker's first line: it saw a number.
      expect(await waitForTitle(pageSession(workers), /^marked:/)).toBe('marked:number');
      expect(seen).toContain('worker/worker');
    } finally {
      await workers.close();
      await root.detach();
    }
  });

  test('a private part puppeteer no longer has fails by its name', () => {
    expect(() => callPrivate(page.target(), '_clientMoved', 'Page._clientMoved()')).toThrow(
      new PuppeteerMoved('Page._clientMoved()'),
    );
    expect(new PuppeteerMoved('Page._client()').message).toMatch(/Page\._client\(\)/);
  });
});

describe("the worker's connection answers Runtime.enable itself", () => {
  test('a worker page never gets Runtime, while a plain puppeteer connection made during its launch keeps its own', async () => {
    // A plain Chromium on its DevTools pipe, unfiltered, ready before the worker's launch.
    const plainProcess = spawn(binary, plainArgs(newProfile()), {
      detached: true,
      stdio: ['ignore', 'ignore', 'ignore', 'pipe', 'pipe'],
      env: { ...process.env, DISPLAY: display.display },
    });
    // Connected in the same turn as the worker's launch starts: a filter that picked "the next
    // connection" of the process would pick this one.
    const ownLaunch = workerBrowser();
    const plainConnect = puppeteer.connect({
      transport: new ChromiumPipeTransport(plainProcess),
      defaultViewport: null,
    });
    const [own, plain] = await Promise.all([ownLaunch, plainConnect]);
    browsers.push(plain);
    expect(await probe(own)).toBe('stack read:false webdriver:false');
    expect(await probe(plain)).toMatch(/^stack read:true /);
  });

  test('two worker browsers launched at once are both quiet', async () => {
    const [a, b] = await Promise.all([workerBrowser(), workerBrowser()]);
    expect(await probe(a)).toBe('stack read:false webdriver:false');
    expect(await probe(b)).toBe('stack read:false webdriver:false');
  });
});

describe('the side channel whose replies stay unparsed', () => {
  test("a command's reply comes back as Chromium's text and never reaches puppeteer, nor does the reply to one given up on", async () => {
    const browser = await workerBrowser();
    const wire = browserWire(browser);
    if (!wire) throw new Error('a browser of the launcher has a side channel');
    const page = (await browser.pages())[0] ?? (await browser.newPage());
    const sessionId = pageSession(page).id();
    // Every message passed on towards puppeteer.
    const passed: string[] = [];
    const forward = wire.onmessage;
    wire.onmessage = (message) => {
      passed.push(message);
      forward?.(message);
    };
    const reply = await wire.command(sessionId, 'Runtime.evaluate', {
      expression: '"caf\u00e9 \\"q\\""',
      returnByValue: true,
    });
    expect(reply.bytes.toString()).toContain('"value":"caf\\u00e9 \\"q\\""');
    // Given up on before Chromium answers (the evaluation waits 300 ms).
    const slow = wire.command(
      sessionId,
      'Runtime.evaluate',
      { expression: 'new Promise((r) => setTimeout(() => r(1), 300))', awaitPromise: true },
      AbortSignal.timeout(50),
    );
    await expect(slow).rejects.toThrow();
    // Puppeteer still answers on the same connection: nothing it did not ask for upset it. Its
    // evaluation's timer is set after the abandoned one's, so Chromium's late answer to that one
    // has come over the wire before this answer does.
    const still = await pageSession(page).send('Runtime.evaluate', {
      expression: 'new Promise((r) => setTimeout(() => r(1 + 1), 300))',
      awaitPromise: true,
      returnByValue: true,
    });
    expect(still.result.value).toBe(2);
    const ours = passed.filter((m) => /"id":1[5-9]\d{8}\b/.test(m.slice(0, 24)));
    expect(ours).toEqual([]);
  });
});

describe('the launch', () => {
  test('the stealth plugin still shapes the command line: AutomationControlled off, no --enable-automation', async () => {
    const browser = await workerBrowser();
    const pid = browserProcess(browser)?.pid;
    expect(pid).toBeDefined();
    const line = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    expect(line).toContain('--disable-blink-features=AutomationControlled');
    expect(line).toContain('--remote-debugging-pipe');
    expect(line).not.toContain('--enable-automation');
  });

  test('closing the browser returns once its process has exited: the profile is free at once', async () => {
    const profile = newProfile();
    const opts = { executablePath: binary, profileDir: profile, display: display.display };
    const first = await launchBrowser(opts);
    const proc = browserProcess(first);
    await first.close();
    // Exited, whichever way: Chromium closed within a moment of its start sometimes ends on a
    // CHECK of its own ("Init observer found at shutdown", SIGTRAP).
    expect(proc).not.toBeNull();
    expect({ code: proc?.exitCode, signal: proc?.signalCode }).not.toEqual({
      code: null,
      signal: null,
    });
    const again = await launchBrowser(opts);
    browsers.push(again);
    expect(await probe(again)).toBe('stack read:false webdriver:false');
  });
});
