import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createLogger } from '@persona-browser/service-kit';
import { startRelay } from '../src/identity/relay';
import type { ForwardProxy } from '@persona-browser/testkit/forward-proxy';
import { startForwardProxy } from '@persona-browser/testkit/forward-proxy';
import type { IdentitySite, StunServer } from '@persona-browser/testkit/identity-site';
import { startIdentitySite, startStun } from '@persona-browser/testkit/identity-site';
import type { RunningWorker } from '@persona-browser/testkit/worker';
import { KEY, startWorker } from '@persona-browser/testkit/worker';
import puppeteer from 'puppeteer-core';

const USER = 'acct-ir-session-7f3a';
const PASSWORD = 'pw-7f3a-never-logged';
const IDENTITY = {
  session: '7f3a',
  exit_ip: '203.0.113.7',
  // A zone with a half-hour offset and no daylight saving: no test machine's own by accident.
  country: 'IR',
  timezone: 'Asia/Tehran',
  locale: 'fa-IR',
  latitude: 35.6892,
  longitude: 51.389,
  created_at: '2026-11-24T10:00:00.000Z',
};
/** What Chromium sends for fa-IR (its own weights on the `--accept-lang` list). */
const ACCEPT_LANGUAGE = 'fa-IR,fa;q=0.9,en;q=0.8';
const LANGUAGES = ['fa-IR', 'fa', 'en'];

const scratch: string[] = [];
afterAll(() => {
  for (const dir of scratch) fs.rmSync(dir, { recursive: true, force: true });
});

/** A scratch folder whose persona `tester` holds `identityText` as its proxy-identity.json. */
function personaWith(identityText: string | null): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-identity-'));
  scratch.push(dir);
  const persona = path.join(dir, 'personas', 'tester');
  fs.mkdirSync(persona, { recursive: true });
  if (identityText !== null)
    fs.writeFileSync(path.join(persona, 'proxy-identity.json'), identityText);
  return dir;
}

/** Every address of this machine's interfaces (what a WebRTC leak would reveal). */
const machineAddresses = (): string[] =>
  Object.values(os.networkInterfaces())
    .flat()
    .map((a) => a?.address)
    .filter((a): a is string => Boolean(a));

const proxyErrors = async (w: RunningWorker): Promise<number | null> =>
  (await w.call<{ proxy_errors: number | null }>('GET', '/api/v1/system/ping', { auth: false }))
    .body.proxy_errors;

/** The probe page's report (`#probe`), read through extract-content once all parts answered. */
async function probeReport(w: RunningWorker, pageId: string): Promise<Record<string, any>> {
  let report: Record<string, any> = {};
  for (let i = 0; i < 60 && !report.done; i++) {
    await new Promise((r) => setTimeout(r, 500));
    const c = await w.call<{ content: string }>('POST', `/api/v1/ops/${pageId}/extract-content`);
    const text = /<pre id="probe">([^<]*)<\/pre>/.exec(c.body.content)?.[1] ?? '{}';
    report = JSON.parse(text.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&'));
  }
  if (!report.done) throw new Error(`probe did not finish: ${JSON.stringify(report)}`);
  return report;
}

describe('a persona with a proxy identity', () => {
  let proxy: ForwardProxy;
  let site: IdentitySite;
  let stun: StunServer;
  let w: RunningWorker;
  let report: Record<string, any>;
  const siteHost = (): string => new URL(site.url).host;

  beforeAll(async () => {
    proxy = await startForwardProxy((user, password) => user === USER && password === PASSWORD);
    site = await startIdentitySite();
    const ipv4 = machineAddresses().find((a) => a.includes('.') && !a.startsWith('127.'));
    stun = await startStun(ipv4 ?? '127.0.0.1');
    const identity = {
      ...IDENTITY,
      proxy: { server: proxy.url, username: USER, password: PASSWORD },
    };
    w = await startWorker({ dir: personaWith(JSON.stringify(identity)) });
    await w.waitInitialized();
    const created = await w.call('POST', '/api/v1/ops/create-page', { body: { page_id: 'who' } });
    expect(created.body.success).toBe(true);
    const nav = await w.call('POST', '/api/v1/ops/who/navigate', {
      body: { url: `${site.url}/probe?stun=${stun.hostPort}` },
    });
    expect(nav.body).toMatchObject({ success: true, status_code: 200 });
    report = await probeReport(w, 'who');
  });
  afterAll(async () => {
    await w?.stop();
    await site?.close();
    await stun?.close();
    await proxy?.close();
  });

  test('the page and a dedicated worker tell the identity’s time zone, offset and locale', () => {
    for (const where of ['page', 'worker']) {
      expect({ where, ...report[where] }).toMatchObject({
        where,
        timeZone: 'Asia/Tehran',
        offset: -210,
        locale: 'fa-IR',
        language: 'fa-IR',
      });
    }
    expect(report.worker.languages).toEqual(LANGUAGES);
  });

  test('the page’s navigator.languages lists the identity’s languages', () => {
    expect(report.page.languages).toEqual(LANGUAGES);
  });

  test('the site received the identity’s Accept-Language from the page and from the worker', () => {
    expect(report.fetch).toBe(ACCEPT_LANGUAGE);
    const fromPage = site.requests.find((r) => r.path === '/seen' && r.from === 'page');
    const fromWorker = site.requests.find((r) => r.path === '/seen' && r.from === 'worker');
    expect(fromPage?.acceptLanguage).toBe(ACCEPT_LANGUAGE);
    expect(fromWorker?.acceptLanguage).toBe(ACCEPT_LANGUAGE);
    for (const r of site.requests) expect(r.acceptLanguage).toBe(ACCEPT_LANGUAGE);
  });

  test('getCurrentPosition answers the identity’s coordinates without a prompt', () => {
    expect(report.geo).toEqual({
      latitude: IDENTITY.latitude,
      longitude: IDENTITY.longitude,
      accuracy: expect.any(Number),
    });
    expect(report.geo.accuracy).toBeGreaterThanOrEqual(20);
    expect(report.geo.accuracy).toBeLessThanOrEqual(100);
  });

  test('a DevTools client’s own page tells the same identity: time zone, locale, languages, position, through the proxy', async () => {
    const version = await w.call<{ webSocketDebuggerUrl: string }>('GET', '/json/version');
    const client = await puppeteer.connect({
      browserWSEndpoint: version.body.webSocketDebuggerUrl,
      headers: { authorization: `Bearer ${KEY}` },
      defaultViewport: null,
    });
    try {
      const page = await client.newPage();
      const before = proxy.requests.length;
      await page.goto(`${site.url}/probe?stun=${stun.hostPort}&client=1`);
      await page.waitForFunction(
        () => JSON.parse(document.querySelector('#probe')?.textContent || '{}').done === true,
        { timeout: 30_000 },
      );
      const seen = JSON.parse(
        await page.evaluate(() => document.querySelector('#probe')?.textContent ?? '{}'),
      );
      for (const where of ['page', 'worker']) {
        expect({ where, ...seen[where] }).toMatchObject({
          where,
          timeZone: report[where].timeZone,
          offset: report[where].offset,
          locale: report[where].locale,
          language: report[where].language,
          languages: report[where].languages,
        });
      }
      expect(seen.page.timeZone).toBe('Asia/Tehran');
      expect(seen.geo).toMatchObject({
        latitude: IDENTITY.latitude,
        longitude: IDENTITY.longitude,
      });
      expect(seen.fetch).toBe(ACCEPT_LANGUAGE);
      const through = proxy.requests.slice(before).filter((r) => r.target === siteHost());
      expect(through.length).toBeGreaterThan(0);
      expect(through.every((r) => r.user === USER)).toBe(true);
    } finally {
      await client.disconnect();
    }
  });

  test('every request went through the proxy as the session’s user; none reached the site directly', () => {
    const forwarded = proxy.requests.filter((r) => r.target === siteHost());
    expect(forwarded.length).toBeGreaterThanOrEqual(4); // page, worker script, two fetches
    expect(forwarded.every((r) => r.user === USER)).toBe(true);
    // Nothing asked the proxy without the session's credentials.
    expect(proxy.requests.every((r) => r.user === USER)).toBe(true);
    // Every request the site served is one the proxy forwarded…
    expect(site.requests.length).toBe(forwarded.length);
    // …and every connection the site accepted was opened by the proxy (this process), not by
    // the browser.
    expect(site.connections.length).toBeGreaterThan(0);
    expect(site.connections.filter((c) => !c.openedHere)).toEqual([]);
  });

  test('WebRTC gathers no candidate with any of the machine’s addresses, and sends no UDP', () => {
    // Without the policy switch this Chromium reports the machine's own address as a `srflx`
    // candidate from the STUN server, and sends it UDP (measured): both checks below then fail.
    const candidates: string[] = report.rtc;
    for (const address of machineAddresses()) {
      for (const c of candidates) expect(c.split(' ')).not.toContain(address);
    }
    expect(stun.requests).toBe(0);
  });

  test('a refused proxy counts in proxy_errors, fails the navigation, and nothing goes direct', async () => {
    const before = await proxyErrors(w);
    expect(typeof before).toBe('number');
    const servedBefore = site.requests.length;
    const connectionsBefore = site.connections.length;
    await proxy.close();

    // An https site: the tunnel cannot be opened, a browser-level failure (200, success false).
    const secure = await w.call('POST', '/api/v1/ops/who/navigate', {
      body: { url: `https://${siteHost()}/secure` },
    });
    expect(secure.status).toBe(200);
    expect(secure.body).toEqual({
      success: false,
      error: expect.stringMatching(/ERR_TUNNEL_CONNECTION_FAILED/),
      page_id: 'who',
    });
    const afterSecure = (await proxyErrors(w)) as number;
    expect(afterSecure).toBeGreaterThanOrEqual((before as number) + 1);

    // A plain http site: the relay's 502 shows as Chromium's error page, never the site.
    const plain = await w.call('POST', '/api/v1/ops/who/navigate', {
      body: { url: `${site.url}/must-not-load` },
    });
    expect(plain.body).toMatchObject({ success: true, status_code: 502 });
    expect(plain.body.final_url).toMatch(/^chrome-error:/);
    const afterPlain = (await proxyErrors(w)) as number;
    expect(afterPlain).toBeGreaterThan(afterSecure);

    // The site saw nothing at all: no request, no connection (not even the TLS attempt).
    expect(site.requests.length).toBe(servedBefore);
    expect(site.connections.length).toBe(connectionsBefore);

    const failing = w.logs.filter((l) => l.includes('"proxy failing"'));
    expect(failing.some((l) => l.includes('ECONNREFUSED'))).toBe(true);
  });

  test('no log line holds the proxy password', () => {
    expect(w.logs.join('\n')).not.toContain(PASSWORD);
  });

  test('stopping the worker closes the relay', async () => {
    const applied = w.logs.find((l) => l.includes('"proxy identity applied"'));
    const port = (JSON.parse(applied as string) as { relay_port: number }).relay_port;
    await w.stop();
    const refused = await new Promise<string>((resolve) => {
      const s = net.connect(port, '127.0.0.1', () => {
        s.destroy();
        resolve('connected');
      });
      s.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? 'error'));
    });
    expect(refused).toBe('ECONNREFUSED');
  });
});

describe('a persona without a proxy identity', () => {
  test('proxy_errors is null and the browser reaches sites itself', async () => {
    const site = await startIdentitySite();
    const w = await startWorker({ dir: personaWith(null) });
    try {
      await w.waitInitialized();
      expect(await proxyErrors(w)).toBeNull();
      await w.call('POST', '/api/v1/ops/create-page', { body: { page_id: 'plain' } });
      const nav = await w.call('POST', '/api/v1/ops/plain/navigate', {
        body: { url: `${site.url}/` },
      });
      expect(nav.body).toMatchObject({ success: true, status_code: 200 });
      // The check of the identity test sees a direct connection for what it is.
      expect(site.connections.length).toBeGreaterThan(0);
      expect(site.connections.every((c) => !c.openedHere)).toBe(true);
    } finally {
      await w.stop();
      await site.close();
    }
  });
});

describe('a persona at home with its own time zone and locale', () => {
  let site: IdentitySite;
  let w: RunningWorker;
  let report: Record<string, any>;

  beforeAll(async () => {
    site = await startIdentitySite();
    // Newfoundland: a half-hour offset that no test machine has by accident.
    w = await startWorker({
      dir: personaWith(null),
      env: { BROWSER_TIMEZONE: 'America/St_Johns', BROWSER_LOCALE: 'pt-BR' },
    });
    await w.waitInitialized();
    await w.call('POST', '/api/v1/ops/create-page', { body: { page_id: 'home' } });
    const nav = await w.call('POST', '/api/v1/ops/home/navigate', {
      body: { url: `${site.url}/probe` },
    });
    expect(nav.body).toMatchObject({ success: true, status_code: 200 });
    report = await probeReport(w, 'home');
  });
  afterAll(async () => {
    await w?.stop();
    await site?.close();
  });

  test('the page and its worker tell BROWSER_TIMEZONE and BROWSER_LOCALE, with its languages', () => {
    for (const where of ['page', 'worker']) {
      expect({ where, ...report[where] }).toMatchObject({
        where,
        timeZone: 'America/St_Johns',
        locale: 'pt-BR',
        language: 'pt-BR',
        languages: ['pt-BR', 'pt', 'en'],
      });
      // -210 in winter (NST), -150 in summer (NDT): never a whole hour.
      expect([210, 150]).toContain(report[where].offset);
    }
    expect(report.fetch).toBe('pt-BR,pt;q=0.9,en;q=0.8');
  });

  test('no proxy: proxy_errors stays null', async () => {
    expect(await proxyErrors(w)).toBeNull();
  });

  test('with its own time zone it is warned of nothing (a UTC host warns: panel.test.ts)', async () => {
    const status = await w.call<{ warnings: string[] }>('GET', '/api/v1/system/status');
    expect(status.body.warnings).toEqual([]);
  });
});

describe('a broken identity file', () => {
  const refusal = async (text: string): Promise<string> => {
    const dir = personaWith(text);
    const err = await startWorker({ dir }).then(
      async (w) => {
        await w.stop();
        return new Error('the worker started');
      },
      (e: Error) => e,
    );
    return err.message;
  };
  const file = /personas\/tester\/proxy-identity\.json/;

  test('not JSON: the worker exits 2 with one line naming the file', async () => {
    const message = await refusal(`{"proxy": {"password": "${PASSWORD}"`);
    expect(message).toMatch(/exited with 2 before listening/);
    const line = message.split('\n').find((l) => l.startsWith('persona-browser: '));
    expect(line).toMatch(file);
    expect(line).toMatch(/is not valid JSON/);
    expect(message).not.toContain(PASSWORD);
  });

  test('off the schema: the worker exits 2 with one line naming the file and the field', async () => {
    const bad = {
      ...IDENTITY,
      latitude: 'north',
      proxy: { server: 'http://127.0.0.1:1', username: USER, password: PASSWORD },
    };
    const message = await refusal(JSON.stringify(bad));
    expect(message).toMatch(/exited with 2 before listening/);
    const line = message.split('\n').find((l) => l.startsWith('persona-browser: '));
    expect(line).toMatch(file);
    expect(line).toMatch(/field latitude: latitude must be a number/);
    expect(message).not.toContain(PASSWORD);
    const noServer = { ...bad, latitude: 1, proxy: { username: USER, password: PASSWORD } };
    expect(await refusal(JSON.stringify(noServer))).toMatch(
      /field proxy\.server: proxy\.server is required/,
    );
  });
});

describe('the relay on its own, against the real forward proxy', () => {
  const logger = createLogger({ secrets: [], level: 'error' });
  const throughRelay = (port: number, opts: http.RequestOptions): Promise<number> =>
    new Promise((resolve, reject) => {
      http
        .request({ host: '127.0.0.1', port, ...opts }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        })
        .on('connect', (res, socket) => {
          socket.destroy();
          resolve(res.statusCode ?? 0);
        })
        .on('error', reject)
        .end();
    });

  test('refused credentials: 502 to the browser (never 407), counted once per request', async () => {
    const upstream = await startForwardProxy(() => false);
    const relay = await startRelay({
      upstream: upstream.url,
      username: USER,
      password: 'wrong',
      logger,
    });
    try {
      expect(await throughRelay(relay.port, { path: 'http://127.0.0.1:9/x' })).toBe(502);
      expect(await throughRelay(relay.port, { method: 'CONNECT', path: '127.0.0.1:9' })).toBe(502);
      expect(relay.failures).toBe(2);
      expect(upstream.requests.map((r) => [r.method, r.user, r.status])).toEqual([
        ['GET', USER, 407],
        ['CONNECT', USER, 407],
      ]);
    } finally {
      await relay.close();
      await upstream.close();
    }
  });

  test('a site’s own 5xx passes through and is not counted', async () => {
    const origin = http.createServer((_req, res) => res.writeHead(503).end('busy'));
    await new Promise<void>((r) => origin.listen(0, '127.0.0.1', r));
    const upstream = await startForwardProxy((u, p) => u === USER && p === PASSWORD);
    const relay = await startRelay({
      upstream: upstream.url,
      username: USER,
      password: PASSWORD,
      logger,
    });
    try {
      const port = (origin.address() as net.AddressInfo).port;
      expect(await throughRelay(relay.port, { path: `http://127.0.0.1:${port}/` })).toBe(503);
      expect(relay.failures).toBe(0);
    } finally {
      await relay.close();
      await upstream.close();
      await new Promise((r) => origin.close(r));
    }
  });
});
