import http from 'node:http';
import WebSocket from 'ws';
import type { Browser } from 'puppeteer-core';
import { launchClientBrowser } from '@persona-browser/testkit/client-browser';
import { workerPid } from '@persona-browser/testkit/fleet-procs';
import type { ClientBrowser } from '@persona-browser/testkit/client-browser';
import type { RunningWaker } from '@persona-browser/testkit/waker';
import {
  KEY,
  call,
  freePort,
  makePersonas,
  startWaker,
  until,
} from '@persona-browser/testkit/waker';
import { fleetEnv } from '@persona-browser/testkit/fleet';
import { openWithKey } from '@persona-browser/testkit/panel-key';

/**
 * The fleet's memory budget on a real process fleet (real workers, real Chromium). A first
 * waker has FLEET_MAX_AWAKE=2; the second a budget that one persona holding a heavy page fits
 * and two do not.
 */
const NAMES = ['a', 'b', 'c'] as const;
const FLEET = `mbudget${process.pid}`;
type Name = (typeof NAMES)[number];

let ports: Record<Name | 'waker', number>;
let personasDir: string;
let waker: RunningWaker | null = null;
let client: ClientBrowser | null = null;
const views: WebSocket[] = [];

const start = async (env: Record<string, string>): Promise<RunningWaker> =>
  startWaker(
    fleetEnv(
      {
        driver: 'process',
        fleet: FLEET,
        port: ports.waker,
        env: { METRICS_INTERVAL: '1', METRICS_WINDOW: '60', ...env },
      },
      personasDir,
    ),
  );

/**
 * A call with the key at the persona's own port (a harmless read): it wakes the persona if it
 * sleeps, and counts as its activity. A public read (ping, status) would do neither.
 */
const callPersona = (name: Name) =>
  call(`http://127.0.0.1:${ports[name]}/api/v1/system/process-tree`);

/** The persona's live view, open through its port (a person watching it). */
async function openLiveView(name: Name): Promise<WebSocket> {
  const session = await fetch(`http://127.0.0.1:${ports[name]}/vnc/session`, {
    method: 'POST',
    headers: { authorization: `Bearer ${KEY}` },
  });
  expect(session.status).toBe(200);
  const cookie = (session.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
  const ws = new WebSocket(`ws://127.0.0.1:${ports[name]}/vnc/websockify`, {
    headers: { cookie },
  });
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  views.push(ws);
  return ws;
}

const states = async (w: RunningWaker): Promise<Record<string, string>> =>
  Object.fromEntries((await w.personas()).map((p) => [p.name, p.state]));

/** The persona's memory (MB) in the waker's newest sample that has it. */
async function measured(w: RunningWaker, name: Name): Promise<number> {
  return until(
    async () => {
      const body = (await call(`${w.url}/api/metrics`)).body;
      const last = body.samples.at(-1);
      return last?.instances?.[name]?.rss_mb ?? null;
    },
    30_000,
    `a memory sample of ${name}`,
  );
}

beforeAll(async () => {
  ports = { waker: await freePort(), a: 0, b: 0, c: 0 };
  for (const n of NAMES) ports[n] = await freePort();
  const envs = Object.fromEntries(
    NAMES.map((n) => [n, `PORT=${ports[n]}\nMODE=sleepy\nIDLE_TIMEOUT=600\n`]),
  );
  ({ personasDir } = makePersonas(envs));
});

afterAll(async () => {
  for (const ws of views) ws.terminate();
  await client?.close();
  await waker?.stop();
});

/** What one persona holds on this machine, running alone. */
let aloneMb = 0;

/** The memory of `name` once it has settled: two samples in a row within 10 MB. */
async function settledMb(w: RunningWaker, name: Name): Promise<number> {
  return until(
    async () => {
      const body = (await call(`${w.url}/api/metrics`)).body;
      const [before, last] = (body.samples as Array<Record<string, any>>)
        .slice(-2)
        .map((s) => s.instances?.[name]?.rss_mb as number | undefined);
      if (before === undefined || last === undefined) return null;
      return Math.abs(last - before) < 10 ? last : null;
    },
    60_000,
    `two memory samples of ${name} in a row within 10 MB`,
  );
}

test('FLEET_MAX_AWAKE=2: the least recently used idle persona sleeps when a third wakes; one with a live view open is kept', async () => {
  waker = await start({ FLEET_MAX_AWAKE: '2' });
  expect((await callPersona('a')).status).toBe(200);
  aloneMb = await settledMb(waker, 'a');
  process.stdout.write(`a persona holds ${aloneMb} MB (PSS) running alone\n`);
  expect((await callPersona('b')).status).toBe(200);
  // The control: two fit, nobody was put to sleep for them.
  expect(waker.logs.some((l) => l.includes('put to sleep for memory'))).toBe(false);
  expect((await callPersona('c')).status).toBe(200);
  expect(await states(waker)).toMatchObject({ a: 'sleeping', b: 'running', c: 'running' });
  expect(waker.logs.some((l) => l.includes('"slept":"a"'))).toBe(true);
  // b is now the least recently used, but a person watches it: c sleeps instead.
  await openLiveView('b');
  expect((await callPersona('a')).status).toBe(200);
  expect(await states(waker)).toMatchObject({ a: 'running', b: 'running', c: 'sleeping' });
  for (const ws of views.splice(0)) ws.terminate();
  await waker.stop();
  waker = null;
});

test('a persona in light sleep holds memory: the budget puts it to deep sleep first when it is the least recently used', async () => {
  waker = await start({ FLEET_MAX_AWAKE: '2', LIGHT_SLEEP_SECONDS: '3600' });
  expect((await callPersona('a')).status).toBe(200);
  const light = await call(`${waker.url}/api/personas/a/sleep`, {
    method: 'POST',
    body: { depth: 'light' },
  });
  expect(light.body).toMatchObject({ state: 'sleeping', depth: 'light' });
  const kept = workerPid(FLEET, 'a');
  expect(kept).not.toBeNull();
  expect((await callPersona('b')).status).toBe(200);
  // The control: a kept worker and a running one are two, and two fit: a stays as it sleeps.
  expect((await waker.persona('a')).depth).toBe('light');
  expect(workerPid(FLEET, 'a')).toBe(kept);
  // A third is one too many: a, used least recently, goes deep; b, used since, runs on.
  expect((await callPersona('c')).status).toBe(200);
  expect(await waker.persona('a')).toMatchObject({ state: 'sleeping', depth: 'deep' });
  expect(await states(waker)).toMatchObject({ b: 'running', c: 'running' });
  expect(workerPid(FLEET, 'a')).toBeNull();
  expect(waker.logs.some((l) => l.includes('"slept":"a"'))).toBe(true);
  await waker.stop();
  waker = null;
});

/**
 * A page that holds this many MB in the persona's browser. A bare persona holds 380 to 510 MB
 * here (PSS: its share of pages every Chromium on the machine maps, so it moves with them); with
 * the page it holds this plus that. The budget fits one such persona while a bare one holds
 * under 1000 MB, and refuses a second while it holds over 100.
 */
const HEAVY_MB = 800;
const LIMIT_MB = 2 * HEAVY_MB + 200;

describe('FLEET_MEMORY_LIMIT_MB of one heavy persona', () => {
  let site: http.Server;
  let sitePort = 0;
  const limitMb = LIMIT_MB;

  beforeAll(async () => {
    site = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(
        `<title>heavy</title><script>window.kept = new Uint8Array(${HEAVY_MB} * 1048576).fill(1);</script>`,
      );
    });
    sitePort = await freePort();
    await new Promise<void>((r) => site.listen(sitePort, '127.0.0.1', r));
    waker = await start({
      FLEET_MEMORY_LIMIT_MB: String(limitMb),
      HOST_MEMORY_MIN_AVAILABLE_MB: '0',
    });
  });

  /**
   * Persona a opens the heavy page; resolves once the samples show it whole. The page fills its
   * array while the waker samples, so a sample can catch it part-way (841 MB was seen): the wait
   * is for over half the budget, where a's own measure and b's estimate (the fleet's median, a's
   * measure alone: b was never measured by this waker) make more than the budget.
   */
  async function makeHeavy(w: RunningWaker): Promise<number> {
    const base = `http://127.0.0.1:${ports.a}/api/v1/ops`;
    const created = await call(`${base}/create-page`, {
      method: 'POST',
      body: { page_id: 'heavy' },
    });
    expect(created.status).toBe(200);
    const went = await call(`${base}/heavy/navigate`, {
      method: 'POST',
      body: { url: `http://127.0.0.1:${sitePort}/` },
    });
    expect(went.status).toBe(200);
    return until(
      async () => {
        const mb = await measured(w, 'a');
        return mb > LIMIT_MB / 2 ? mb : null;
      },
      30_000,
      `a holding over ${LIMIT_MB / 2} MB`,
    );
  }

  // One test: the view that holds a awake is opened, then closed.
  test('nothing can be freed: 503 with Retry-After, the message names the budget, the panel shows why; the view closes and the other wakes', async () => {
    const w = waker as RunningWaker;
    expect((await callPersona('a')).status).toBe(200);
    await openLiveView('a');
    process.stdout.write(`a holds ${await makeHeavy(w)} MB with the heavy page\n`);
    const refused = await callPersona('b');
    process.stdout.write(`refused: ${refused.body.error}\n`);
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('10');
    expect(refused.body.success).toBe(false);
    expect(refused.body.error).toContain(`FLEET_MEMORY_LIMIT_MB=${limitMb}`);
    expect(refused.body.error).toMatch(/held by a \d+ MB \(live view open\)/);
    expect(await states(w)).toMatchObject({ a: 'running', b: 'sleeping' });
    // The API's wake says the same.
    const api = await call(`${w.url}/api/personas/b/wake`, { method: 'POST' });
    expect(api.status).toBe(503);
    expect(api.headers.get('retry-after')).toBe('10');
    // A live view opened with the key at the sleeping persona is refused the same way, never
    // left hanging.
    const upgrade = await new Promise<{ status: number; retryAfter: string | undefined }>(
      (resolve, reject) => {
        const ws = new WebSocket(`ws://127.0.0.1:${ports.b}/vnc/websockify`, {
          headers: { authorization: `Bearer ${KEY}` },
        });
        ws.once('unexpected-response', (_req, res) => {
          resolve({ status: res.statusCode ?? 0, retryAfter: res.headers['retry-after'] });
          ws.terminate();
        });
        ws.once('open', () => reject(new Error('the socket opened')));
        ws.once('error', () => undefined);
      },
    );
    expect(upgrade).toEqual({ status: 503, retryAfter: '10' });

    client = await launchClientBrowser();
    const browser: Browser = client.browser;
    const page = await browser.newPage();
    await openWithKey(page, `${w.url}/`, KEY);
    const sel = 'tr[data-persona="b"] [data-field="error"]';
    await page.waitForSelector(sel, { timeout: 15_000 });
    const shown = await page.$eval(sel, (e) => (e as HTMLElement).innerText.trim());
    expect(shown).toContain('wake refused');
    expect(shown).toContain(`FLEET_MEMORY_LIMIT_MB=${limitMb}`);
    // Prometheus has the budget and what holds it.
    const text = (await call(`${w.url}/metrics`)).body as string;
    expect(text).toContain(
      `persona_browser_fleet_memory_budget_bytes{node=""} ${limitMb * 1024 * 1024}`,
    );
    expect(text).toMatch(/persona_browser_fleet_memory_budget_used_bytes\{node=""\} [1-9]/);

    // The view closes: the idle persona is put to sleep and the other wakes.
    for (const ws of views.splice(0)) ws.close();
    await until(async () => ((await w.persona('a')).idle_seconds !== null ? true : null), 10_000);
    const woke = await callPersona('b');
    expect([woke.status, woke.body.error]).toEqual([200, undefined]);
    expect(await states(w)).toMatchObject({ a: 'sleeping', b: 'running' });
    // What the panel showed is gone with the wake.
    expect((await w.persona('b')).error).toBeNull();
  });

  afterAll(async () => {
    for (const ws of views.splice(0)) ws.terminate();
    await waker?.stop();
    waker = null;
    await new Promise((r) => site?.close(r));
  });
});

test('HOST_MEMORY_MIN_AVAILABLE_MB above what the host has: the wake is refused naming it', async () => {
  const threshold = 100_000_000;
  waker = await start({ HOST_MEMORY_MIN_AVAILABLE_MB: String(threshold) });
  const refused = await callPersona('a');
  expect(refused.status).toBe(503);
  expect(refused.headers.get('retry-after')).toBe('10');
  expect(refused.body.error).toContain(`HOST_MEMORY_MIN_AVAILABLE_MB=${threshold}`);
  expect(refused.body.error).toMatch(/the host has \d+ MB available/);
  expect((await waker.persona('a')).state).toBe('sleeping');
  await waker.stop();
  waker = null;
});
