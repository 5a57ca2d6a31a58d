import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { RunningWorker } from '@persona-browser/testkit/worker';
import { startWorker } from '@persona-browser/testkit/worker';

/**
 * NAVIGATE_PAUSE_MS: the pause navigate makes before it starts. A persona that sets it to 0 in
 * its persona.env navigates at once; one that leaves it alone pauses about 2 s as the API says.
 * Measured against each other, on the same machine and the same local page.
 */

type Body = Record<string, any>;

/** A local site that notes when each page request arrives (performance.now()). */
interface Site {
  url: string;
  arrivals: Map<string, number>;
  close(): Promise<void>;
}

async function startSite(): Promise<Site> {
  const arrivals = new Map<string, number>();
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname !== '/page') {
      res.writeHead(404).end();
      return;
    }
    arrivals.set(url.searchParams.get('visit') ?? '', performance.now());
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end('<!doctype html><html><head><title>Own site</title></head><body>here</body></html>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    arrivals,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

let site: Site;
let quick: RunningWorker;
let usual: RunningWorker;

beforeAll(async () => {
  site = await startSite();
  // One persona drops the pause in its own persona.env; the other keeps the default.
  [quick, usual] = await Promise.all([
    startWorker({ persona: 'own-sites', personaEnv: 'NAVIGATE_PAUSE_MS=0\n' }),
    startWorker({ persona: 'person' }),
  ]);
  await Promise.all([quick.waitInitialized(), usual.waitInitialized()]);
});
afterAll(async () => {
  await Promise.all([quick?.stop(), usual?.stop()]);
  await site?.close();
});

interface Visit {
  /** The whole navigate call, as its client waits for it. */
  callMs: number;
  /** From sending the call to the page's request reaching the site: the pause and the start. */
  toRequestMs: number;
}

/** Navigates a fresh page of `w` to the site, twice (the first warms the browser up). */
async function visit(w: RunningWorker, name: string): Promise<Visit> {
  const created = await w.call<Body>('POST', '/api/v1/ops/create-page', {
    body: { page_id: name },
  });
  expect(created.status).toBe(200);
  const go = async (visitId: string): Promise<Visit> => {
    const url = `${site.url}/page?visit=${visitId}`;
    const sent = performance.now();
    const r = await w.call<Body>('POST', `/api/v1/ops/${name}/navigate`, { body: { url } });
    expect(r.body).toEqual({
      success: true,
      page_id: name,
      url,
      status_code: 200,
      final_url: url,
    });
    const arrived = site.arrivals.get(visitId);
    if (arrived === undefined) throw new Error(`the site never saw ${visitId}`);
    return { callMs: r.ms, toRequestMs: arrived - sent };
  };
  await go(`${name}-warm`);
  const measured = await go(name);
  await w.call('DELETE', `/api/v1/ops/${name}/destroy-page`);
  return measured;
}

test('NAVIGATE_PAUSE_MS=0 navigates without the pause; the default pauses about 2 s first', async () => {
  const none = await visit(quick, 'quick');
  const paused = await visit(usual, 'usual');
  // The page's request leaves at once without the pause, about 2 s (1.8 to 2.2) later with it.
  expect(paused.toRequestMs - none.toRequestMs).toBeGreaterThan(1_500);
  expect(paused.toRequestMs - none.toRequestMs).toBeLessThan(2_200 + 1_500);
  expect(paused.callMs - none.callMs).toBeGreaterThan(1_500);
  // And the call without it is quick by itself: nothing else waits in its place.
  expect(none.toRequestMs).toBeLessThan(1_500);
});

test('a bad NAVIGATE_PAUSE_MS stops the worker at start with a line naming it', async () => {
  for (const bad of ['-1', 'soon', '600000']) {
    const started = startWorker({ persona: null, env: { NAVIGATE_PAUSE_MS: bad } });
    await expect(started).rejects.toThrow(/exited with 2 before listening/);
    await expect(started).rejects.toThrow(/invalid NAVIGATE_PAUSE_MS: "NAVIGATE_PAUSE_MS" must/);
  }
});
