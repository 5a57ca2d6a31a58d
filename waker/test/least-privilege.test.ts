import fs from 'node:fs';
import path from 'node:path';
import puppeteer from 'puppeteer-core';
import type { Browser, Page } from 'puppeteer-core';
import { navigatorStatusSchema, pingSchema, poolStatusSchema } from '@persona-browser/contracts';
import { bearer, callFrom, upgradeStatus } from '@persona-browser/testkit/door';
import type { Fixture } from '@persona-browser/testkit/fixture';
import { startFixture } from '@persona-browser/testkit/fixture';
import type { ClientBrowser } from '@persona-browser/testkit/client-browser';
import { launchClientBrowser } from '@persona-browser/testkit/client-browser';
import { fleetPids, workerPid } from '@persona-browser/testkit/fleet-procs';
import type { RunningWaker } from '@persona-browser/testkit/waker';
import { KEY, ROOT, freePort, startWaker, until } from '@persona-browser/testkit/waker';
import { startFleet } from '@persona-browser/testkit/fleet';
import { openWithKey } from '@persona-browser/testkit/panel-key';

/**
 * Least privilege at the front door, on the process driver with real workers: nothing wakes a
 * sleeping persona without its key or a token of it; its public routes are answered by the
 * waker in the worker's shapes; tokens the waker makes open what their scope names and nothing else,
 * are refused within a second of their revocation or expiry, and survive a restart of the
 * waker; a burst of wrong keys from one address meets 429 while the right key is served.
 *
 * Each test knocks from a loopback address of its own (127.0.0.x): the doors count failed
 * attempts per address, and no test's knocks may change what another one meets.
 */
const FLEET = `lptest${process.pid}`;
const LIMIT = 12;

let waker: RunningWaker;
let env: Record<string, string>;
let personasDir: string;
let ports: { waker: number; alice: number; bob: number };
let site: Fixture;
const alice = (): string => `http://127.0.0.1:${ports.alice}`;
const bob = (): string => `http://127.0.0.1:${ports.bob}`;

beforeAll(async () => {
  ports = { waker: await freePort(), alice: await freePort(), bob: await freePort() };
  site = await startFixture();
  ({ waker, env, personasDir } = await startFleet({
    driver: 'process',
    fleet: FLEET,
    port: ports.waker,
    personas: {
      alice: `PORT=${ports.alice}\nMODE=sleepy\nIDLE_TIMEOUT=600\n`,
      bob: `PORT=${ports.bob}\nMODE=sleepy\nIDLE_TIMEOUT=600\n`,
    },
    env: { AUTH_FAILURES_PER_MINUTE: String(LIMIT) },
  }));
});

afterAll(async () => {
  await waker?.stop();
  await site?.close();
});

/** The waker's own API, with the key. */
const api = (from: string, p: string, method = 'GET', body?: unknown) =>
  callFrom(from, `${waker.url}${p}`, { method, body, headers: bearer(KEY) });

async function mint(
  persona: string,
  scope: 'full' | 'read' | 'live',
  more: { ttl_s?: number; page_id?: string; label?: string } = {},
): Promise<{ id: string; token: string; expires_at: string }> {
  const r = await api('127.0.0.1', '/api/tokens', 'POST', { persona, scope, ...more });
  expect(r.status).toBe(200);
  return r.body;
}

async function asleep(name: string): Promise<void> {
  await api('127.0.0.1', `/api/personas/${name}/sleep`, 'POST');
  await waker.waitState(name, 'sleeping');
}

/** The persona sleeps and no worker process of it runs. */
async function stillAsleep(name: string): Promise<void> {
  expect((await waker.persona(name)).state).toBe('sleeping');
  expect(fleetPids(FLEET, name)).toEqual([]);
}

const mcpInitialize = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: {
    protocolVersion: '2025-03-26',
    capabilities: {},
    clientInfo: { name: 't', version: '1' },
  },
};
const mcpHeaders = { accept: 'application/json, text/event-stream' };

test("a sleeping persona's public routes answer in the worker's shapes, from the waker, and wake nothing", async () => {
  await asleep('alice');
  const from = '127.0.0.2';
  const status = await callFrom(from, `${alice()}/api/v1/system/status`);
  expect(status.status).toBe(200);
  expect(navigatorStatusSchema.validate(status.body, { allowUnknown: true }).error).toBeUndefined();
  expect(status.body).toMatchObject({
    initialized: false,
    page_count: 0,
    persona_state: 'sleeping',
  });
  const pages = await callFrom(from, `${alice()}/api/v1/system/status/pages`);
  expect(pages.status).toBe(200);
  expect(poolStatusSchema.validate(pages.body, { allowUnknown: true }).error).toBeUndefined();
  expect(pages.body).toMatchObject({ total_pages: 0, pages: [], persona_state: 'sleeping' });
  const ping = await callFrom(from, `${alice()}/api/v1/system/ping`);
  expect(pingSchema.validate(ping.body, { allowUnknown: true }).error).toBeUndefined();
  expect(ping.body).toMatchObject({ status: 'alive', persona: 'alice', persona_state: 'sleeping' });
  // The plugin list, a plugin's README and the API document are the worker's own, built by
  // its code: the same plugins as the checkout holds.
  const plugins = await callFrom(from, `${alice()}/api/v1/plugins`);
  expect(plugins.status).toBe(200);
  const names = (plugins.body.plugins as Array<{ name: string }>).map((p) => p.name);
  expect(names).toContain('archive/check');
  expect(plugins.body.count).toBe(names.length);
  const docs = await callFrom(from, `${alice()}/api/v1/plugins/archive/check/docs`);
  expect(docs.status).toBe(200);
  expect(docs.headers['content-type']).toContain('text/markdown');
  expect(docs.text).toBe(
    fs.readFileSync(path.join(ROOT, 'plugins', 'archive', 'check', 'README.md'), 'utf8'),
  );
  expect((await callFrom(from, `${alice()}/api/v1/plugins/no/such/docs`)).status).toBe(404);
  const openapi = await callFrom(from, `${alice()}/openapi.json`);
  expect(Object.keys(openapi.body.paths)).toContain('/api/v1/ops/{page_id}/navigate');
  // A browser loading the panel or the live view gets a page that wakes nothing by itself.
  for (const p of ['/', '/vnc/', '/docs']) {
    const page = await callFrom(from, `${alice()}${p}`, { headers: { accept: 'text/html' } });
    expect(page.status).toBe(200);
    expect(page.text).toContain('Persona alice is sleeping');
  }
  await stillAsleep('alice');
});

test('no request without the right key wakes a sleeping persona; the right key does', async () => {
  await asleep('alice');
  const from = '127.0.0.3';
  const bobs = (await mint('bob', 'full')).token;
  const reader = (await mint('alice', 'read')).token;
  const knocks: Array<[string, Promise<number>]> = [
    ['no key', post(from, `${alice()}/api/v1/ops/create-page`, null)],
    ['wrong key', post(from, `${alice()}/api/v1/ops/create-page`, 'wrong')],
    ["bob's token", post(from, `${alice()}/api/v1/ops/create-page`, bobs)],
    ['read token, navigate', post(from, `${alice()}/api/v1/ops/p1/navigate`, reader)],
    ['status with a wrong key', get(from, `${alice()}/api/v1/system/status`, 'wrong')],
    ['page load with a wrong key', get(from, `${alice()}/`, 'wrong')],
    ['DevTools discovery, no key', get(from, `${alice()}/json/version`, null)],
    ['DevTools, no key', upgradeStatus(from, `${alice()}/devtools/browser/x`)],
    ['DevTools, wrong key', upgradeStatus(from, `${alice()}/devtools/browser/x`, bearer('wrong'))],
    [
      'live view socket, a stale cookie',
      upgradeStatus(from, `${alice()}/vnc/websockify`, { cookie: 'pb_vnc_1=00' }),
    ],
    ['MCP, no key', mcp(from, `${alice()}/mcp`, null)],
    ["the waker's MCP, no key", mcp(from, `${waker.url}/mcp`, null)],
  ];
  const statuses: Record<string, number> = {};
  for (const [what, knock] of knocks) statuses[what] = await knock;
  expect(statuses).toEqual({
    'no key': 401,
    'wrong key': 401,
    "bob's token": 401,
    'read token, navigate': 403,
    // A status read is public: answered by the waker, whatever it carries.
    'status with a wrong key': 200,
    'page load with a wrong key': 401,
    'DevTools discovery, no key': 401,
    'DevTools, no key': 401,
    'DevTools, wrong key': 401,
    'live view socket, a stale cookie': 401,
    'MCP, no key': 401,
    "the waker's MCP, no key": 401,
  });
  await stillAsleep('alice');
  await stillAsleep('bob');
  // The control: the same call with the key wakes alice and is served.
  expect(await post(from, `${alice()}/api/v1/ops/create-page`, KEY)).toBe(200);
  expect((await waker.persona('alice')).state).toBe('running');
  expect(workerPid(FLEET, 'alice')).not.toBeNull();
  const metrics = await api('127.0.0.1', '/metrics');
  const refused = (reason: string): number =>
    Number(
      new RegExp(`auth_refusals_total\\{door="persona",reason="${reason}"\\} (\\d+)`).exec(
        metrics.text,
      )?.[1] ?? -1,
    );
  expect(refused('missing')).toBeGreaterThanOrEqual(4);
  expect(refused('invalid')).toBeGreaterThanOrEqual(4);
  expect(refused('persona')).toBeGreaterThanOrEqual(1);
  expect(refused('scope')).toBeGreaterThanOrEqual(1);
});

test('tokens open what their scope names, through the door, and nothing of another persona', async () => {
  const from = '127.0.0.4';
  const full = (await mint('alice', 'full', { label: 'agent' })).token;
  const read = (await mint('alice', 'read')).token;
  const live = (await mint('alice', 'live')).token;
  const onePage = (await mint('alice', 'read', { page_id: 'tp1' })).token;
  await post(from, `${alice()}/api/v1/ops/tp1/destroy-page`, KEY);
  await post(from, `${alice()}/api/v1/ops/tp2/destroy-page`, KEY);
  expect(await post(from, `${alice()}/api/v1/ops/create-page`, full, { page_id: 'tp1' })).toBe(200);
  expect(await post(from, `${alice()}/api/v1/ops/create-page`, KEY, { page_id: 'tp2' })).toBe(200);
  const nav = { url: `${site.url}/` };
  const table: Record<string, number> = {
    'full: navigate': await post(from, `${alice()}/api/v1/ops/tp1/navigate`, full, nav),
    'full: DevTools discovery': await get(from, `${alice()}/json/version`, full),
    'full: the fleet update': await get(from, `${alice()}/api/v1/system/update`, full),
    'read: screenshot': await get(from, `${alice()}/api/v1/ops/tp1/screenshot`, read),
    'read: navigate': await post(from, `${alice()}/api/v1/ops/tp1/navigate`, read, nav),
    'read: DevTools': await get(from, `${alice()}/json/version`, read),
    'read: MCP': await mcp(from, `${alice()}/mcp`, read),
    'read: live view': await post(from, `${alice()}/vnc/session`, read),
    'live: live view': await post(from, `${alice()}/vnc/session`, live),
    'live: screenshot': await get(from, `${alice()}/api/v1/ops/tp1/screenshot`, live),
    'one page: its page': await get(from, `${alice()}/api/v1/ops/tp1/screenshot`, onePage),
    'one page: another page': await get(from, `${alice()}/api/v1/ops/tp2/screenshot`, onePage),
    "alice's token on bob": await get(from, `${bob()}/api/v1/ops/tp1/screenshot`, full),
    'full: MCP': await mcp(from, `${alice()}/mcp`, full),
    // An MCP answer is an event stream that says keep-alive, to a client that said close: the
    // door's pooled connection to the worker must still serve the next call.
    'read: screenshot after MCP': await get(from, `${alice()}/api/v1/ops/tp1/screenshot`, read),
  };
  expect(table).toEqual({
    'full: navigate': 200,
    'full: DevTools discovery': 200,
    'full: MCP': 200,
    'full: the fleet update': 403,
    'read: screenshot': 200,
    'read: navigate': 403,
    'read: DevTools': 403,
    'read: MCP': 403,
    'read: live view': 403,
    'live: live view': 200,
    'live: screenshot': 403,
    'one page: its page': 200,
    'one page: another page': 403,
    "alice's token on bob": 401,
    'read: screenshot after MCP': 200,
  });
  await stillAsleep('bob');
});

test("public reads and refused calls never count as activity; a loading page's own files do", async () => {
  expect((await api('127.0.0.1', '/api/personas/alice/wake', 'POST')).status).toBe(200);
  const from = '127.0.0.8';
  const last = async (): Promise<string | null> => (await waker.persona('alice')).last_request;
  expect(await get(from, `${alice()}/api/v1/system/process-tree`, KEY)).toBe(200);
  const before = await last();
  expect(before).not.toBeNull();
  // A monitor's status poll, a scanner's page load and wrong keys: the idle clock goes on.
  expect(await get(from, `${alice()}/api/v1/system/status`, null)).toBe(200);
  expect(await get(from, `${alice()}/ui/base.css`, null)).toBe(200);
  expect(await get(from, `${alice()}/api/v1/system/process-tree`, 'wrong')).toBe(401);
  expect(await last()).toBe(before);
  // A browser fetching the files of a page it loaded from here is someone opening it.
  const part = await callFrom(from, `${alice()}/ui/base.css`, {
    headers: { 'sec-fetch-site': 'same-origin', 'sec-fetch-dest': 'style' },
  });
  expect(part.status).toBe(200);
  expect(await last()).not.toBe(before);
  // Only a page load holds the persona in use while its files and first calls follow: the
  // scanner's load of a file did not, a browser's load of a page from here does.
  const idle = async (): Promise<number | null> => (await waker.persona('alice')).idle_seconds;
  expect(await get(from, `${alice()}/vnc/`, null)).toBe(200);
  expect(
    await until(async () => ((await idle()) !== null ? true : null), 5_000, 'alice idle'),
  ).toBe(true);
  const page = await callFrom(from, `${alice()}/vnc/`, {
    headers: { 'sec-fetch-site': 'same-origin', 'sec-fetch-dest': 'document' },
  });
  expect(page.status).toBe(200);
  expect(await idle()).toBeNull();
});

test('a revoked token is refused within a second, and its open DevTools connection closes', async () => {
  const from = '127.0.0.5';
  const made = await mint('alice', 'full', { label: 'revoke me' });
  expect(await post(from, `${alice()}/api/v1/ops/create-page`, made.token)).toBe(200);
  let browser: Browser | null = null;
  try {
    browser = await puppeteer.connect({
      browserWSEndpoint: `${alice().replace('http', 'ws')}/devtools/browser/x`,
      headers: bearer(made.token),
    });
    const gone = new Promise<number>((resolve) =>
      browser?.once('disconnected', () => resolve(Date.now())),
    );
    const listed = await api('127.0.0.1', '/api/tokens');
    const entry = (listed.body.tokens as Array<Record<string, unknown>>).find(
      (t) => t.id === made.id,
    );
    expect(entry).toMatchObject({ persona: 'alice', scope: 'full', label: 'revoke me' });
    expect(JSON.stringify(listed.body)).not.toContain(made.token);
    const revokedAt = Date.now();
    expect((await api('127.0.0.1', `/api/tokens/${made.id}`, 'DELETE')).status).toBe(200);
    const refused = await until(
      async () =>
        (await get(from, `${alice()}/api/v1/system/process-tree`, made.token)) === 401 || null,
      5_000,
      'the revoked token refused',
    );
    expect(refused).toBe(true);
    expect(Date.now() - revokedAt).toBeLessThan(1_000);
    const closedAt = await Promise.race([
      gone,
      new Promise<number>((r) => setTimeout(() => r(-1), 5_000)),
    ]);
    expect(closedAt).toBeGreaterThan(0);
    expect(closedAt - revokedAt).toBeLessThan(1_000);
    expect((await api('127.0.0.1', `/api/tokens/${made.id}`, 'DELETE')).status).toBe(404);
  } finally {
    await browser?.disconnect().catch(() => undefined);
  }
});

test('an expired token is refused within a second of its expiry', async () => {
  const from = '127.0.0.6';
  // Awake first: a wake takes longer than this token lives.
  expect((await api('127.0.0.1', '/api/personas/alice/wake', 'POST')).status).toBe(200);
  // Long enough to be served once before it expires, on a loaded machine too.
  const made = await mint('alice', 'read', { ttl_s: 5 });
  const expiry = Date.parse(made.expires_at);
  expect(await get(from, `${alice()}/api/v1/ops/none/screenshot`, made.token)).toBe(404);
  await until(async () => (Date.now() >= expiry ? true : null), 10_000, 'the expiry');
  const refusedAt = await until(
    async () =>
      (await get(from, `${alice()}/api/v1/ops/none/screenshot`, made.token)) === 401
        ? Date.now()
        : null,
    5_000,
    'the expired token refused',
  );
  expect(refusedAt - expiry).toBeLessThan(1_000);
});

test('a burst of wrong keys from one address meets 429 while the right key is served', async () => {
  const from = '127.0.0.9';
  const statuses: number[] = [];
  for (let i = 0; i < LIMIT + 3; i++)
    statuses.push(await get(from, `${alice()}/json/version`, `x${i}`));
  expect(statuses.slice(0, LIMIT)).toEqual(Array(LIMIT).fill(401));
  expect(statuses.slice(LIMIT)).toEqual([429, 429, 429]);
  const throttled = await callFrom(from, `${alice()}/json/version`, { headers: bearer('y') });
  expect(throttled.status).toBe(429);
  expect(Number(throttled.headers['retry-after'])).toBeGreaterThan(0);
  // The right key from that address is served; the waker's API throttles the address too.
  expect(await get(from, `${alice()}/api/v1/system/process-tree`, KEY)).toBe(200);
  expect((await callFrom(from, `${waker.url}/api/personas`, { headers: bearer('z') })).status).toBe(
    429,
  );
  expect((await api(from, '/api/personas')).status).toBe(200);
  // Another address is not held back.
  expect(await get('127.0.0.10', `${alice()}/json/version`, 'wrong')).toBe(401);
});

test('tokens and revocations survive a restart of the waker; the file keeps no token', async () => {
  const kept = await mint('alice', 'read', { label: 'kept' });
  const revoked = await mint('alice', 'read');
  expect((await api('127.0.0.1', `/api/tokens/${revoked.id}`, 'DELETE')).status).toBe(200);
  await waker.stop();
  const file = fs.readFileSync(path.join(personasDir, '.tokens.json'), 'utf8');
  expect(file).toContain(kept.id);
  expect(file).not.toContain(kept.token);
  expect(file).not.toContain(kept.token.split('.')[1]);
  expect(fs.statSync(path.join(personasDir, '.tokens.json')).mode & 0o077).toBe(0);
  waker = await startWaker(env);
  const ids = ((await api('127.0.0.1', '/api/tokens')).body.tokens as Array<{ id: string }>).map(
    (t) => t.id,
  );
  expect(ids).toContain(kept.id);
  expect(ids).not.toContain(revoked.id);
  const from = '127.0.0.7';
  expect(await get(from, `${alice()}/api/v1/ops/none/screenshot`, revoked.token)).toBe(401);
  await stillAsleep('alice');
  // The kept one still opens alice: it wakes her (the page does not exist there: 404).
  expect(await get(from, `${alice()}/api/v1/ops/none/screenshot`, kept.token)).toBe(404);
});

describe('in a browser', () => {
  let client: ClientBrowser;
  beforeAll(async () => {
    client = await launchClientBrowser();
  });
  afterAll(async () => {
    await client?.close();
  });

  /** The control state alice's worker reports (read with the key). */
  const control = async (): Promise<{ controlled: boolean; page_id: string | null }> =>
    (await callFrom('127.0.0.1', `${alice()}/vnc/control`, { headers: bearer(KEY) })).body;

  test('the fleet panel makes a live-view link for one page, and the link drives that page', async () => {
    expect((await api('127.0.0.1', '/api/personas/alice/wake', 'POST')).status).toBe(200);
    for (const id of ['shared', 'other']) {
      await post('127.0.0.1', `${alice()}/api/v1/ops/${id}/destroy-page`, KEY);
      expect(
        await post('127.0.0.1', `${alice()}/api/v1/ops/create-page`, KEY, { page_id: id }),
      ).toBe(200);
    }
    const panel = await client.browser.newPage();
    let viewer: Page | null = null;
    try {
      await openWithKey(panel, `${waker.url}/`, KEY);
      const share = 'button[data-action="share"][data-persona="alice"]:not([disabled])';
      await panel.waitForSelector(share);
      await panel.click(share);
      await panel.waitForSelector('form[data-share="alice"] select[name="page"]');
      await panel.select('form[data-share="alice"] select[name="page"]', 'shared');
      await panel.click('form[data-share="alice"] button[type="submit"]');
      const link = await panel.waitForFunction(
        () =>
          document.querySelector<HTMLInputElement>('input[data-field="live-url"]')?.value || null,
        { timeout: 15_000 },
      );
      const url = String(await link.jsonValue());
      expect(url).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:${ports.alice}/vnc/#token=pbt_`));
      // The token is the waker's: listed with what the panel asked, never with its secret.
      const tokens = (await api('127.0.0.1', '/api/tokens')).body.tokens as Array<
        Record<string, unknown>
      >;
      expect(tokens).toContainEqual(
        expect.objectContaining({ persona: 'alice', scope: 'live', page_id: 'shared' }),
      );
      // Opened by a person (no key typed), the viewer takes control of that page at once.
      viewer = await client.browser.newPage();
      await viewer.goto(url, { waitUntil: 'load' });
      await until(
        async () => ((await control()).page_id === 'shared' ? true : null),
        60_000,
        'the link to take control of its page',
      );
      expect(await viewer.evaluate(() => location.hash)).toBe('');
      expect(await viewer.$eval('#key-form', (f) => (f as HTMLElement).hidden)).toBe(true);
      // And of no other: its session may not take another page.
      const other = await viewer.evaluate(async () => {
        const r = await fetch('/vnc/control', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ page_id: 'other' }),
        });
        return r.status;
      });
      expect(other).toBe(403);
      expect((await control()).page_id).toBe('shared');
    } finally {
      await viewer?.close().catch(() => undefined);
      await panel.close().catch(() => undefined);
    }
  });

  test('a page load of a sleeping persona wakes it only with a credential', async () => {
    await asleep('alice');
    // A browser that never held alice's key (the panel's tests store none for her port anyway).
    const context = await client.browser.createBrowserContext();
    const page = await context.newPage();
    try {
      // Without one: the page says the persona sleeps and asks for the key; nothing wakes.
      await page.goto(`${alice()}/vnc/`, { waitUntil: 'load' });
      await page.waitForSelector('#form:not([hidden])');
      expect(await page.$eval('h1', (h) => h.textContent)).toBe('Persona alice is sleeping');
      await stillAsleep('alice');
      // With a token in the link's fragment, the page wakes alice and becomes her viewer.
      // (Opened as a link is: a new page, not a change of this one's fragment.)
      const { token } = await mint('alice', 'live');
      const link = await context.newPage();
      await link.goto(`${alice()}/vnc/#token=${token}`, { waitUntil: 'load' });
      await link.waitForSelector('#screen', { timeout: 60_000 });
      expect((await waker.persona('alice')).state).toBe('running');
    } finally {
      await context.close().catch(() => undefined);
    }
  });
});

async function get(from: string, url: string, credential: string | null): Promise<number> {
  return (await callFrom(from, url, { headers: bearer(credential) })).status;
}

async function post(
  from: string,
  url: string,
  credential: string | null,
  body: unknown = {},
): Promise<number> {
  return (await callFrom(from, url, { method: 'POST', body, headers: bearer(credential) })).status;
}

async function mcp(from: string, url: string, credential: string | null): Promise<number> {
  const r = await callFrom(from, url, {
    method: 'POST',
    body: mcpInitialize,
    headers: { ...mcpHeaders, ...bearer(credential) },
  });
  return r.status;
}
