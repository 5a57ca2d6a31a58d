import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import type { Page } from 'puppeteer-core';
import type { ClientBrowser } from '@persona-browser/testkit/client-browser';
import { launchClientBrowser } from '@persona-browser/testkit/client-browser';
import { pageProblems } from '@persona-browser/testkit/page-problems';
import { viewerLive } from '@persona-browser/testkit/viewer';
import type { RunningWorker } from '@persona-browser/testkit/worker';
import { KEY, startWorker } from '@persona-browser/testkit/worker';

/**
 * A live view whose first call gets no answer (a connection lost on the way, a proxy that
 * stalls): the viewer gives the call up after its deadline, says so, asks again and goes live,
 * instead of showing "Starting…" for ever. A viewer whose script (or one of its imports) failed
 * to load loads again. A real worker and browser behind a proxy on loopback that holds a
 * `POST /vnc/session` unanswered or ends a file's connection when told to, and passes
 * everything else on.
 */

let w: RunningWorker;
let client: ClientBrowser;
let proxy: http.Server;
let proxyPort: number;
const held: http.ServerResponse[] = [];
const sessionCalls: string[] = [];
/** Whether the proxy holds the next `POST /vnc/session` unanswered. */
let holdSession = false;
/** Paths whose next request the proxy ends without an answer; what it ended. */
const resetOnce = new Set<string>();
const reset: string[] = [];
/** Every path asked for through the proxy. */
const asked: string[] = [];

beforeAll(async () => {
  w = await startWorker({ persona: 'stalled' });
  await w.waitInitialized();
  const target = Number(new URL(w.url).port);
  proxy = http.createServer((req, res) => {
    asked.push(req.url ?? '');
    if (req.method === 'POST' && req.url === '/vnc/session') {
      sessionCalls.push(holdSession ? 'held' : 'passed');
      if (holdSession) {
        holdSession = false;
        held.push(res);
        return;
      }
    }
    if (resetOnce.delete(req.url ?? '')) {
      reset.push(req.url ?? '');
      res.socket?.destroy();
      return;
    }
    const out = http.request(
      { host: '127.0.0.1', port: target, path: req.url, method: req.method, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.on('error', () => res.destroy());
        answer.pipe(res);
      },
    );
    // A page that reloads or closes mid-answer ends its connections: nothing here may throw.
    out.on('error', () => res.destroy());
    req.on('error', () => out.destroy());
    res.on('error', () => out.destroy());
    req.pipe(out);
  });
  // The live view's WebSocket, passed on byte for byte.
  proxy.on('upgrade', (req: http.IncomingMessage, socket: net.Socket, head: Buffer) => {
    const out = net.connect(target, '127.0.0.1', () => {
      const lines = [`${req.method} ${req.url} HTTP/1.1`];
      for (let i = 0; i < req.rawHeaders.length; i += 2)
        lines.push(`${req.rawHeaders[i]}: ${req.rawHeaders[i + 1]}`);
      out.write(`${lines.join('\r\n')}\r\n\r\n`);
      out.write(head);
      out.pipe(socket);
      socket.pipe(out);
    });
    out.on('error', () => socket.destroy());
    socket.on('error', () => out.destroy());
  });
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
  proxyPort = (proxy.address() as AddressInfo).port;
  client = await launchClientBrowser();
});

afterAll(async () => {
  for (const res of held) res.destroy();
  proxy?.closeAllConnections();
  await new Promise<void>((r) => (proxy ? proxy.close(() => r()) : r()));
  await client?.close();
  await w?.stop();
});

/** A new page of the person's browser, with what its status and message said on the way. */
async function watchedViewer(): Promise<{ page: Page; said: string[] }> {
  const page = await client.browser.newPage();
  const said: string[] = [];
  await page.exposeFunction('reportStatus', (text: string) => said.push(text));
  await page.evaluateOnNewDocument(() => {
    const report = (window as unknown as { reportStatus: (t: string) => void }).reportStatus;
    new MutationObserver(() => {
      const s = document.getElementById('status')?.textContent ?? '';
      const m = document.getElementById('message')?.textContent ?? '';
      report(`${s} | ${m}`);
    }).observe(document, { subtree: true, childList: true, characterData: true });
  });
  return { page, said };
}

test('a viewer whose first call is never answered says so, asks again and goes live', async () => {
  const { page, said } = await watchedViewer();
  const problems = pageProblems(page);
  sessionCalls.length = 0;
  holdSession = true;
  await page.goto(`http://127.0.0.1:${proxyPort}/vnc/#key=${KEY}`, { waitUntil: 'load' });
  await viewerLive(page, 90_000, problems);
  expect(sessionCalls).toEqual(['held', 'passed']);
  // What the person read meanwhile: that the worker did not answer, and that it waits for it.
  expect(said.some((t) => t.startsWith('Waiting for the browser') && /no answer/.test(t))).toBe(
    true,
  );
  expect(await page.$eval('#status', (e) => e.textContent)).toBe('Live');
  await page.close();
});

test('a viewer whose script failed to load loads again and goes live', async () => {
  const { page, said } = await watchedViewer();
  const problems = pageProblems(page);
  // An import of the viewer's module, its connection ended without an answer.
  resetOnce.add('/vnc/worker-call.js');
  asked.length = 0;
  await page.goto(`http://127.0.0.1:${proxyPort}/vnc/#key=${KEY}`, { waitUntil: 'load' });
  await viewerLive(page, 60_000, problems);
  expect(reset).toContain('/vnc/worker-call.js');
  // The page itself was loaded again, and the module with it: more than once when a later load
  // failed too (CI once saw three loads, cause unknown), each failure being one more load, as it
  // is for a person.
  expect(asked.filter((u) => u === '/vnc/').length).toBeGreaterThanOrEqual(2);
  expect(asked.filter((u) => u === '/vnc/worker-call.js').length).toBeGreaterThanOrEqual(2);
  expect(said.some((t) => t.startsWith('Loading again'))).toBe(true);
  expect(await page.$eval('#status', (e) => e.textContent)).toBe('Live');
  await page.close();
});
