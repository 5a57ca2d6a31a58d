import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { IDENTITY_FILE, identitySchema, personaListSchema } from '@persona-browser/contracts';
import type { PersonaInfo, ProxyIdentity } from '@persona-browser/contracts';
import type { ForwardProxy } from '@persona-browser/testkit/forward-proxy';
import { startForwardProxy } from '@persona-browser/testkit/forward-proxy';
import { launchClientBrowser } from '@persona-browser/testkit/client-browser';
import { IdentityError, makeIdentity } from '../src/identity';
import type { GeoipStandin } from '@persona-browser/testkit/geoip-standin';
import { BERLIN, startGeoipStandin } from '@persona-browser/testkit/geoip-standin';
import { fleetPids, portReleased, workerPid } from '@persona-browser/testkit/fleet-procs';
import type { Reply, RunningWaker } from '@persona-browser/testkit/waker';
import { KEY, call, freePort, sleep, until } from '@persona-browser/testkit/waker';
import { startFleet } from '@persona-browser/testkit/fleet';
import { openFleetPanel } from '@persona-browser/testkit/panel-server';

/**
 * Proxy identities end to end: the built waker (process driver, real workers and Chromium), a
 * real authenticated forward proxy on loopback, and a GeoIP stand-in behind it. The waker makes
 * each identity through the proxy session itself, writes it for the worker, and shows it.
 */
const ACCOUNT = 'acct-test';
const PASSWORD = 'pw-Never-In-Logs-4711';
const TOKEN = 'geoip-token-Never-Logged-0815';
const SESSION_USER = new RegExp(`^${ACCOUNT}-country-de-session-([a-z0-9]{10})$`);

const scratch: string[] = [];
afterAll(() => {
  for (const dir of scratch) fs.rmSync(dir, { recursive: true, force: true });
});

describe('makeIdentity through a loopback proxy', () => {
  let proxy: ForwardProxy;
  let geo: GeoipStandin;
  const base = (): Parameters<typeof makeIdentity>[0] => ({
    country: 'DE',
    proxyServer: proxy.url,
    username: ACCOUNT,
    password: PASSWORD,
    geoipBaseUrl: geo.url,
    geoipToken: TOKEN,
  });
  /** The error makeIdentity fails with; it never holds the password or the token. */
  const failure = async (opts: Parameters<typeof makeIdentity>[0]): Promise<string> => {
    const err = await makeIdentity(opts).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(IdentityError);
    const message = (err as Error).message;
    expect(message).not.toContain(PASSWORD);
    expect(message).not.toContain(TOKEN);
    return message;
  };

  beforeAll(async () => {
    proxy = await startForwardProxy((u, p) => SESSION_USER.test(u) && p === PASSWORD);
    geo = await startGeoipStandin();
  });
  afterAll(async () => {
    await proxy?.close();
    await geo?.close();
  });
  beforeEach(() => geo.answer({ status: 200, body: BERLIN }));

  test('an http GeoIP is asked in absolute form through the session', async () => {
    const identity = await makeIdentity(base());
    expect(identitySchema.validate(identity).error).toBeUndefined();
    expect(identity).toMatchObject({
      proxy: { server: proxy.url, password: PASSWORD },
      exit_ip: BERLIN.ip,
      country: 'DE',
      timezone: 'Europe/Berlin',
      locale: 'de-DE',
      latitude: 52.5244,
      longitude: 13.4105,
    });
    expect(identity.proxy.username).toBe(`${ACCOUNT}-country-de-session-${identity.session}`);
    expect(proxy.requests.at(-1)).toEqual({
      method: 'GET',
      target: `127.0.0.1:${geo.port}`,
      user: identity.proxy.username,
      status: 200,
    });
    expect(geo.lookups.at(-1)).toMatchObject({ path: '/json', token: TOKEN });
    expect(geo.lookups.at(-1)?.headers['proxy-authorization']).toBeUndefined();
  });

  // The stand-in's certificate is made by openssl (installed by .ci/run).
  test('an https GeoIP is reached through a CONNECT tunnel, then TLS', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-geoip-tls-'));
    scratch.push(dir);
    const made = spawnSync('openssl', [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
      '-keyout',
      path.join(dir, 'key.pem'),
      '-out',
      path.join(dir, 'cert.pem'),
    ]);
    expect(made.status).toBe(0);
    const cert = fs.readFileSync(path.join(dir, 'cert.pem'), 'utf8');
    const key = fs.readFileSync(path.join(dir, 'key.pem'), 'utf8');
    const secure = await startGeoipStandin({ status: 200, body: BERLIN }, { key, cert });
    try {
      const identity = await makeIdentity({ ...base(), geoipBaseUrl: secure.url, ca: cert });
      expect(identity).toMatchObject({ country: 'DE', exit_ip: BERLIN.ip });
      expect(proxy.requests.at(-1)).toEqual({
        method: 'CONNECT',
        target: `127.0.0.1:${secure.port}`,
        user: identity.proxy.username,
        status: 200,
      });
      expect(secure.lookups.at(-1)).toMatchObject({ path: '/json', token: TOKEN });
      // A certificate the waker does not trust fails the lookup (no silent downgrade).
      const untrusted = await failure({ ...base(), geoipBaseUrl: secure.url });
      expect(untrusted).toContain('GeoIP TLS through the proxy failed');
      // A refused CONNECT is the proxy refusing the session.
      expect(await failure({ ...base(), geoipBaseUrl: secure.url, password: 'nope' })).toBe(
        'proxy refused the session (407)',
      );
    } finally {
      await secure.close();
    }
  });

  test('a wrong password is the proxy refusing the session (407)', async () => {
    expect(await failure({ ...base(), password: 'wrong-password' })).toBe(
      'proxy refused the session (407)',
    );
  });

  test('an exit in another country is refused', async () => {
    geo.answer({ status: 200, body: { ...BERLIN, country: 'FR', timezone: 'Europe/Paris' } });
    expect(await failure(base())).toBe(`proxy exit ${BERLIN.ip} is in FR, not DE`);
  });

  test('a GeoIP error, a bad answer and a slow one are one clear line each', async () => {
    geo.answer({ status: 403, body: { error: { title: 'Wrong token' } } });
    expect(await failure(base())).toBe('GeoIP lookup through the proxy answered HTTP 403');
    geo.answer({ status: 200, body: '<html>' });
    expect(await failure(base())).toBe('GeoIP answer is not JSON');
    geo.answer({ status: 200, body: { ...BERLIN, loc: undefined } });
    expect(await failure(base())).toBe('GeoIP answer is invalid: field loc: loc is required');
    geo.answer({ status: 200, body: BERLIN, delayMs: 3_000 });
    const started = Date.now();
    expect(await failure({ ...base(), timeoutMs: 500 })).toBe(
      'GeoIP lookup timed out after 500 ms',
    );
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  test('a proxy that is not there refuses the connection', async () => {
    const port = await freePort();
    expect(await failure({ ...base(), proxyServer: `http://127.0.0.1:${port}` })).toBe(
      `proxy 127.0.0.1:${port} refused the connection`,
    );
  });
});

describe('the waker gives sleepy personas with PROXY_COUNTRY a proxy identity', () => {
  const FLEET = `idtest${process.pid}`;
  let proxy: ForwardProxy;
  let geo: GeoipStandin;
  let waker: RunningWaker;
  let personasDir: string;
  let ports: Record<string, number>;
  /** The password the proxy takes right now: changing it makes the waker's a wrong one. */
  let proxyPassword = PASSWORD;

  const fileOf = (name: string): string => path.join(personasDir, name, IDENTITY_FILE);
  const readFile = (name: string): ProxyIdentity =>
    JSON.parse(fs.readFileSync(fileOf(name), 'utf8')) as ProxyIdentity;
  const personaOf = async (name: string): Promise<PersonaInfo> => await waker.persona(name);
  const through = (name: string, route: string, body?: unknown): Promise<Reply> =>
    call(`http://127.0.0.1:${ports[name]}${route}`, {
      method: body === undefined ? 'GET' : 'POST',
      body,
    });

  /** Puts `de` to sleep as the API does; its identity file stays. */
  const sleepDe = async (): Promise<void> => {
    const slept = await call(`${waker.url}/api/personas/de/sleep`, { method: 'POST' });
    expect(slept.body.state).toBe('sleeping');
  };
  /** A call through the port with the key: it wakes a sleeping persona (a status read does not). */
  const wakeThrough = (name: string): Promise<Reply> =>
    through(name, '/api/v1/system/process-tree');
  /** `de` awake (a call with the key through its port wakes it) and the identity it wears. */
  const awakeDe = async (): Promise<ProxyIdentity> => {
    expect((await wakeThrough('de')).status).toBe(200);
    const status = await through('de', '/api/v1/system/status');
    expect(status).toMatchObject({ status: 200, body: { initialized: true } });
    return readFile('de');
  };

  beforeAll(async () => {
    proxy = await startForwardProxy((u, p) => SESSION_USER.test(u) && p === proxyPassword);
    geo = await startGeoipStandin();
    const own = { waker: await freePort(), de: await freePort(), plain: await freePort() };
    ports = own;
    const made = await startFleet({
      driver: 'process',
      fleet: FLEET,
      port: own.waker,
      personas: {
        de: `PORT=${ports.de}\nMODE=sleepy\nIDLE_TIMEOUT=600\nPROXY_COUNTRY=de\n`,
        plain: `PORT=${ports.plain}\nMODE=sleepy\nIDLE_TIMEOUT=600\n`,
        always: `PORT=${await freePort()}\nMODE=always-on\nPROXY_COUNTRY=DE\n`,
        nowhere: `PORT=${await freePort()}\nMODE=sleepy\nIDLE_TIMEOUT=600\nPROXY_COUNTRY=Germany\n`,
      },
      env: {
        PROXY_SERVER: proxy.url,
        PROXY_USERNAME: ACCOUNT,
        PROXY_PASSWORD: PASSWORD,
        PROXY_USERNAME_TEMPLATE: '{username}-country-{country}-session-{session}',
        GEOIP_BASE_URL: geo.url,
        GEOIP_TOKEN: TOKEN,
      },
    });
    scratch.push(made.root);
    ({ waker, personasDir } = made);
  });

  afterAll(async () => {
    await waker?.stop();
    await proxy?.close();
    await geo?.close();
  });

  test('PROXY_COUNTRY on an always-on persona, or not a country, skips it with one line', async () => {
    const names = (await waker.personas()).map((p) => p.name);
    expect(names).toEqual(['de', 'plain']);
    const lines = waker.logs.filter((l) => l.includes('skipped'));
    expect(
      lines.some(
        (l) =>
          l.includes('persona always') &&
          l.includes('PROXY_COUNTRY') &&
          l.includes('sleepy personas only'),
      ),
    ).toBe(true);
    expect(lines.some((l) => l.includes('persona nowhere') && l.includes('PROXY_COUNTRY'))).toBe(
      true,
    );
  });

  test('before any wake the API shows the country and no identity', async () => {
    const list = await call(`${waker.url}/api/personas`);
    expect(personaListSchema.validate(list.body).error).toBeUndefined();
    const de = await personaOf('de');
    expect(de.proxy).toEqual({
      country: 'DE',
      exit_ip: null,
      session: null,
      proxy_errors: null,
      failing: false,
    });
    expect(fs.existsSync(fileOf('de'))).toBe(false);
  });

  test('a persona without PROXY_COUNTRY gets no identity file and proxy null', async () => {
    const woken = await call(`${waker.url}/api/personas/plain/wake`, { method: 'POST' });
    expect(woken).toMatchObject({ status: 200, body: { name: 'plain', state: 'running' } });
    expect(woken.body.proxy).toBeNull();
    expect(fs.existsSync(fileOf('plain'))).toBe(false);
    const ping = await through('plain', '/api/v1/system/ping');
    expect(ping.body).toMatchObject({ persona: 'plain', proxy_errors: null });
    expect((await personaOf('plain')).proxy).toBeNull();
    await call(`${waker.url}/api/personas/plain/sleep`, { method: 'POST' });
  });

  test('a call with its key to it asleep wakes it with a fresh identity file, 0600 and schema-valid', async () => {
    await sleepDe();
    const lookupsBefore = geo.lookups.length;
    expect((await wakeThrough('de')).status).toBe(200);
    const status = await through('de', '/api/v1/system/status');
    expect(status.status).toBe(200);
    expect(status.body.initialized).toBe(true);
    const stat = fs.statSync(fileOf('de'));
    expect(stat.mode & 0o777).toBe(0o600);
    const first = readFile('de');
    expect(identitySchema.validate(first).error).toBeUndefined();
    expect(first).toMatchObject({
      proxy: { server: proxy.url, password: PASSWORD },
      exit_ip: BERLIN.ip,
      country: 'DE',
      locale: 'de-DE',
      timezone: 'Europe/Berlin',
      latitude: 52.5244,
      longitude: 13.4105,
    });
    expect(first.session).toMatch(/^[a-z0-9]{10}$/);
    expect(first.proxy.username).toBe(`${ACCOUNT}-country-de-session-${first.session}`);
    // No temporary file is left beside it.
    expect(fs.readdirSync(path.join(personasDir, 'de')).filter((f) => f.endsWith('.tmp'))).toEqual(
      [],
    );
    // One lookup, through the proxy with this session's credentials, with the token.
    expect(geo.lookups.length).toBe(lookupsBefore + 1);
    expect(geo.lookups.at(-1)).toMatchObject({ path: '/json', token: TOKEN });
    expect(proxy.requests).toContainEqual({
      method: 'GET',
      target: `127.0.0.1:${geo.port}`,
      user: first.proxy.username,
      status: 200,
    });
  });

  test('the worker wears it: its browser goes through the same proxy session', async () => {
    const worn = await awakeDe();
    const created = await through('de', '/api/v1/ops/create-page', { page_id: 'wears' });
    expect(created.body.success).toBe(true);
    const nav = await through('de', '/api/v1/ops/wears/navigate', {
      url: `${geo.url}/json?from=page`,
    });
    expect(nav.body).toMatchObject({ success: true, status_code: 200 });
    expect(geo.lookups.at(-1)).toMatchObject({ path: '/json', token: null });
    const viaProxy = proxy.requests.filter(
      (r) => r.target === `127.0.0.1:${geo.port}` && r.user === worn.proxy.username,
    );
    // The waker's lookup and the page's navigation.
    expect(viaProxy.length).toBeGreaterThanOrEqual(2);
  });

  test('the API shows the proxy (never a credential) and the worker’s proxy errors', async () => {
    const worn = await awakeDe();
    const de = await until(async () => {
      const p = await personaOf('de');
      return p.proxy?.proxy_errors !== null ? p : null;
    }, 20_000);
    expect(de.state).toBe('running');
    expect(de.proxy).toMatchObject({ country: 'DE', exit_ip: BERLIN.ip, session: worn.session });
    // Not failing while the proxy fails none of the session's requests (CI once saw it failing:
    // a failure at the proxy would be named here).
    const failedAtProxy = proxy.requests.filter(
      (r) => r.user === worn.proxy.username && (r.status === 502 || r.status === 407),
    );
    expect({ failing: de.proxy?.failing, failedAtProxy }).toEqual({
      failing: failedAtProxy.length === 0 ? false : expect.any(Boolean),
      failedAtProxy,
    });
    expect(typeof de.proxy?.proxy_errors).toBe('number');
    const raw = JSON.stringify((await call(`${waker.url}/api/personas`)).body);
    expect(raw).not.toContain(PASSWORD);
    expect(raw).not.toContain(TOKEN);
    expect(personaListSchema.validate(JSON.parse(raw)).error).toBeUndefined();
  });

  test('proxy errors that grow show as failing, in the API and the panel', async () => {
    await awakeDe();
    const created = await through('de', '/api/v1/ops/create-page', { page_id: 'errors' });
    expect(created.body.success).toBe(true);
    // The proxy now refuses the session: every page request through it fails at the proxy.
    proxyPassword = 'rotated-password';
    let going = true;
    const traffic = (async () => {
      for (let i = 0; going; i++) {
        await through('de', '/api/v1/ops/errors/navigate', { url: `${geo.url}/json?n=${i}` }).catch(
          () => undefined,
        );
        await sleep(300);
      }
    })();
    try {
      const failing = await until(async () => {
        const p = await personaOf('de');
        return p.proxy?.failing ? p : null;
      }, 30_000);
      expect(failing.proxy?.proxy_errors).toBeGreaterThan(0);
      const client = await launchClientBrowser();
      try {
        const errors: string[] = [];
        const page = await openFleetPanel(client.browser, waker.url, {
          key: KEY,
          width: 1280,
          errors,
        });
        await page.waitForSelector('tr[data-persona="de"] [data-field="proxy"] code');
        const cell = await page.$eval(
          'tr[data-persona="de"] [data-field="proxy"]',
          (td) => td.textContent ?? '',
        );
        expect(cell).toContain('DE');
        expect(cell).toContain(BERLIN.ip);
        expect(cell).not.toContain(PASSWORD);
        const label = await page.waitForSelector(
          'tr[data-persona="de"] [data-field="proxy-failing"]',
          { visible: true, timeout: 30_000 },
        );
        expect(await label?.evaluate((n) => n.textContent)).toBe('proxy failing');
        const plain = await page.$eval(
          'tr[data-persona="plain"] [data-field="proxy"]',
          (td) => td.textContent ?? '',
        );
        expect(plain).toBe('—');
        expect(errors).toEqual([]);
      } finally {
        await client.close();
      }
    } finally {
      going = false;
      await traffic;
      proxyPassword = PASSWORD;
    }
  });

  test('each wake is a new session', async () => {
    const before = await awakeDe();
    await sleepDe();
    expect((await personaOf('de')).proxy).toMatchObject({ proxy_errors: null, failing: false });
    const woken = await call(`${waker.url}/api/personas/de/wake`, { method: 'POST' });
    expect(woken).toMatchObject({ status: 200, body: { state: 'running' } });
    const second = readFile('de');
    expect(second.session).not.toBe(before.session);
    expect(woken.body.proxy.session).toBe(second.session);
    expect(second.proxy.username).toBe(`${ACCOUNT}-country-de-session-${second.session}`);
  });

  test('light sleep keeps the identity: the same worker wakes on the same session, and its browser goes through it', async () => {
    const before = await awakeDe();
    const pid = workerPid(FLEET, 'de');
    const lookups = geo.lookups.length;
    const requests = proxy.requests.length;
    const slept = await call(`${waker.url}/api/personas/de/sleep`, {
      method: 'POST',
      body: { depth: 'light' },
    });
    expect(slept).toMatchObject({ status: 200, body: { state: 'sleeping', depth: 'light' } });
    expect(readFile('de')).toEqual(before);
    const created = await through('de', '/api/v1/ops/create-page', { page_id: 'light' });
    expect(created).toMatchObject({ status: 200, body: { success: true } });
    expect(await personaOf('de')).toMatchObject({ state: 'running', depth: null });
    // The worker that slept, the file it wears, and no new lookup: no new session was made.
    expect(workerPid(FLEET, 'de')).toBe(pid);
    expect(readFile('de')).toEqual(before);
    // (A page's own request, a late favicon, carries no token: only the waker's lookups do.)
    expect(geo.lookups.slice(lookups).filter((l) => l.token === TOKEN)).toEqual([]);
    expect((await personaOf('de')).proxy).toMatchObject({ session: before.session });
    // The browser started on waking goes out through the same session.
    const nav = await through('de', '/api/v1/ops/light/navigate', {
      url: `${geo.url}/json?from=light`,
    });
    expect(nav.body).toMatchObject({ success: true, status_code: 200 });
    expect(proxy.requests.slice(requests)).toContainEqual(
      expect.objectContaining({
        target: `127.0.0.1:${geo.port}`,
        user: before.proxy.username,
        status: 200,
      }),
    );
    // Every request of the woken browser went through that session, none through another.
    const users = new Set(proxy.requests.slice(requests).map((r) => r.user));
    expect([...users]).toEqual([before.proxy.username]);
  });

  test('a proxy that refuses the session fails the wake: no worker, no file, the error shown', async () => {
    await awakeDe();
    await sleepDe();
    expect(fs.existsSync(fileOf('de'))).toBe(true);
    proxyPassword = 'rotated-password';
    try {
      const viaApi = await call(`${waker.url}/api/personas/de/wake`, { method: 'POST' });
      expect(viaApi.status).toBe(502);
      expect(viaApi.body.error).toContain('proxy refused the session (407)');
      // The old identity (a dead session) is gone; no worker was started.
      expect(fs.existsSync(fileOf('de'))).toBe(false);
      expect(workerPid(FLEET, 'de')).toBeNull();
      // A client's call with the key through the port gets the error envelope.
      const viaPort = await wakeThrough('de');
      expect(viaPort.status).toBe(502);
      expect(viaPort.body).toMatchObject({ success: false, page_id: null });
      expect(viaPort.body.error).toContain('proxy refused the session (407)');
      expect(JSON.stringify(viaPort.body)).not.toContain(PASSWORD);
      expect(workerPid(FLEET, 'de')).toBeNull();
      expect(fleetPids(FLEET, 'de')).toEqual([]);
      const de = await personaOf('de');
      expect(de.state).toBe('crashed');
      expect(de.error).toContain('proxy identity failed: proxy refused the session (407)');
      expect(de.proxy).toMatchObject({ country: 'DE', exit_ip: null, session: null });
    } finally {
      proxyPassword = PASSWORD;
    }
    // Once the proxy takes the session again, the next call with the key wakes it.
    expect((await wakeThrough('de')).status).toBe(200);
    const again = await through('de', '/api/v1/system/status');
    expect(again).toMatchObject({ status: 200, body: { initialized: true } });
    expect((await personaOf('de')).state).toBe('running');
    expect(fs.existsSync(fileOf('de'))).toBe(true);
  });

  test('neither the proxy password nor the GeoIP token is in any waker log line', async () => {
    await awakeDe();
    expect(waker.logs.some((l) => l.includes('proxy identity made'))).toBe(true);
    expect(waker.logs.filter((l) => l.includes(TOKEN))).toEqual([]);
    expect(waker.logs.filter((l) => l.includes(PASSWORD))).toEqual([]);
    // The token did reach the GeoIP service.
    expect(geo.lookups.some((l) => l.token === TOKEN)).toBe(true);
  });

  test('stopping the waker leaves no worker behind', async () => {
    await awakeDe();
    expect(workerPid(FLEET, 'de')).not.toBeNull();
    expect(await waker.stop()).toBe(0);
    expect(fleetPids(FLEET)).toEqual([]);
    await portReleased(ports.de);
  });
});
