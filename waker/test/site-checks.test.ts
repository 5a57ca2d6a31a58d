import { execFile } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import { launchClientBrowser } from '@persona-browser/testkit/client-browser';
import type { AddressInfo } from 'node:net';
import type { RunningWaker } from '@persona-browser/testkit/waker';
import { KEY, ROOT, call, freePort, until } from '@persona-browser/testkit/waker';
import { startFleet } from '@persona-browser/testkit/fleet';
import { openWithKey } from '@persona-browser/testkit/panel-key';
import { parseSiteChecks } from '../src/site-checks/schedule';

/**
 * The waker runs a persona's site checks on the cron of its SITE_CHECKS (here every second),
 * through the persona's port, on its real worker: the outcome is in GET
 * /api/personas/{name}/site-checks and in /metrics, a run on demand answers it, and a bad
 * SITE_CHECKS is named. The site is a page with the navigation and nothing else: the check
 * finds those marks and names every other as missing.
 */
const F = 'persona_browser_fleet_';
let waker: RunningWaker;
let site: http.Server;
let siteUrl: string;
const seen: string[] = [];

beforeAll(async () => {
  site = http.createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end('<html><body><nav><a href="/">Home</a></nav><main>A redesign</main></body></html>');
  });
  await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
  siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
  const ports = { waker: await freePort(), alice: await freePort(), bob: await freePort() };
  ({ waker } = await startFleet({
    driver: 'process',
    fleet: `sitecheck${process.pid}`,
    port: ports.waker,
    personas: {
      alice:
        `PORT=${ports.alice}\nMODE=always-on\nSOCIAL_BASE_URL=${siteUrl}\n` +
        `SITE_CHECKS="social?handle=natgeo&wait_s=0@* * * * * *"\n`,
      bob: `PORT=${ports.bob}\nMODE=sleepy\nIDLE_TIMEOUT=600\nSITE_CHECKS="nosuch@0 6 * * *"\n`,
    },
  }));
  await waker.waitState('alice', ['running'], 90_000);
});

afterAll(async () => {
  await waker?.stop();
  site?.closeAllConnections();
  await new Promise((r) => site?.close(r));
});

test('SITE_CHECKS is read as family?params@cron; a bad one says what is wrong', () => {
  expect(
    parseSiteChecks('social?handle=natgeo&wait_s=2@0 6 * * *; social?wait_s=1@*/5 * * * * *'),
  ).toEqual([
    { family: 'social', params: { handle: 'natgeo', wait_s: 2 }, cron: '0 6 * * *' },
    { family: 'social', params: { wait_s: 1 }, cron: '*/5 * * * * *' },
  ]);
  expect(parseSiteChecks('social 0 6 * * *')).toBe(
    '"SITE_CHECKS" entry "social 0 6 * * *" must be family@cron',
  );
  expect(parseSiteChecks('social@every day')).toBe(
    '"SITE_CHECKS" entry "social@every day": "every day" is not a cron expression',
  );
  expect(parseSiteChecks('bank@0 6 * * *')).toBe(
    '"SITE_CHECKS" names family "bank": one of social, archive, bank-a, bank-b',
  );
  // The banks' checks are scheduled as the others are.
  expect(parseSiteChecks('bank-a?wait_s=5@30 7 * * *; bank-b@0 8 * * 1-5')).toEqual([
    { family: 'bank-a', params: { wait_s: 5 }, cron: '30 7 * * *' },
    { family: 'bank-b', params: {}, cron: '0 8 * * 1-5' },
  ]);
});

test('the scheduled check runs on its own: its outcome in the API and in /metrics', async () => {
  const status = await until(
    async () => {
      const r = await call(`${waker.url}/api/personas/alice/site-checks`);
      return r.body.outcomes?.length > 0 ? r.body : null;
    },
    60_000,
    'a scheduled outcome',
  );
  expect(status).toMatchObject({
    persona: 'alice',
    error: null,
    schedule: [{ family: 'social', cron: '* * * * * *' }],
  });
  const [outcome] = status.outcomes;
  expect(outcome).toMatchObject({ family: 'social', ok: false, error: null });
  const found = outcome.items
    .filter((i: { found: boolean }) => i.found)
    .map((i: { name: string }) => i.name);
  expect(found).toEqual([
    'SELECTORS.leftNav',
    'SELECTORS.homeLink',
    'SELECTORS.navLinks',
    'SELECTORS.main',
  ]);
  expect(outcome.missing).toContain('SELECTORS.feedArticle');
  expect(outcome.debug_id).toMatch(/./);
  // It read the site: GETs of the home page and the profile, nothing else.
  expect(new Set(seen.filter((s) => !s.startsWith('GET /favicon')))).toEqual(
    new Set(['GET /', 'GET /natgeo/']),
  );

  const text = (await call<string>(`${waker.url}/metrics`)).body;
  const missing = new RegExp(
    `^${F}site_check_missing\\{persona="alice",family="social"\\} (\\d+)$`,
    'm',
  );
  expect(Number(missing.exec(text)?.[1])).toBe(outcome.missing.length);
  expect(text).toMatch(
    new RegExp(`^${F}site_check_ok\\{persona="alice",family="social"\\} 0$`, 'm'),
  );
  const last = new RegExp(
    `^${F}site_check_last_run_timestamp_seconds\\{persona="alice",family="social"\\} (\\S+)$`,
    'm',
  );
  expect(Math.abs(Number(last.exec(text)?.[1]) * 1000 - Date.now())).toBeLessThan(60_000);
  // The schedule goes on: a later run replaces the outcome.
  await until(
    async () => {
      const r = await call(`${waker.url}/api/personas/alice/site-checks`);
      return r.body.outcomes[0].at > outcome.at ? true : null;
    },
    30_000,
    'a second scheduled run',
  );
});

test('a run on demand answers its outcome; a bad family, persona or SITE_CHECKS is named', async () => {
  const r = await call(`${waker.url}/api/personas/alice/site-checks/social`, { method: 'POST' });
  expect(r.status).toBe(200);
  expect(r.body).toMatchObject({ family: 'social', ok: false, checked: expect.any(Number) });
  const bad = await call(`${waker.url}/api/personas/alice/site-checks/bank`, { method: 'POST' });
  expect(bad).toMatchObject({
    status: 400,
    body: {
      success: false,
      error: 'No site check for family bank: one of social, archive, bank-a, bank-b',
    },
  });
  const nobody = await call(`${waker.url}/api/personas/nobody/site-checks`);
  expect(nobody.status).toBe(404);
  const bob = await call(`${waker.url}/api/personas/bob/site-checks`);
  expect(bob.body).toMatchObject({
    schedule: [],
    outcomes: [],
    error: expect.stringContaining('"SITE_CHECKS" names family "nosuch"'),
  });
});

test('the panel: a button runs the check now, and the outcome names what is missing', async () => {
  const client = await launchClientBrowser();
  try {
    const page = await client.browser.newPage();
    await openWithKey(page, `${waker.url}/`, KEY);
    const button = 'button[data-action="site-check"][data-persona="alice"][data-family="social"]';
    await page.waitForSelector(button, { visible: true });
    await page.click(button);
    // The run's answer comes back as a message; the row shows the outcome with the names.
    await page.waitForFunction(
      () =>
        document.querySelector('#messages')?.textContent?.includes('Site check social of alice'),
      { timeout: 30_000 },
    );
    const line = '[data-field="site-check"][data-family="social"]';
    await page.waitForSelector(`tr[data-persona="alice"] ${line}[data-result="missing"]`, {
      timeout: 30_000,
    });
    const shown = await page.$eval(`tr[data-persona="alice"] ${line}`, (e) => ({
      text: e.textContent,
      title: e.getAttribute('title'),
    }));
    expect(shown.text).toMatch(/^social: \d+ of \d+ missing$/);
    expect(shown.title).toContain('SELECTORS.feedArticle');
    expect(shown.title).toContain('Failure bundle: ');
    // Bob has no SITE_CHECKS that could be read: his row says why.
    expect(await page.$eval('tr[data-persona="bob"] .site-checks', (e) => e.textContent)).toContain(
      '"SITE_CHECKS" names family "nosuch"',
    );
  } finally {
    await client.close();
  }
});

test('check:sites --persona finds the persona through the waker and prints the table', async () => {
  const cli = path.join(ROOT, 'waker', 'dist', 'site-checks', 'cli.js');
  const args = [cli, 'social', '--persona', 'alice', '--waker', waker.url, '--key', KEY];
  const { code, stdout } = await new Promise<{ code: number; stdout: string }>((resolve) =>
    execFile(
      process.execPath,
      [...args, '--param', 'handle=natgeo', '--param', 'wait_s=0'],
      (err, out) => resolve({ code: err ? Number(err.code) : 0, stdout: out }),
    ),
  );
  expect(code).toBe(1);
  expect(stdout).toMatch(/^found +selector +SELECTORS\.leftNav +feed$/m);
  expect(stdout).toMatch(/^MISSING +selector +SELECTORS\.feedArticle +feed$/m);
  expect(stdout).toMatch(/^social: \d+ of \d+ missing: SELECTORS\.searchEntry, /m);
  // Bad arguments: exit 2 and the usage.
  const bad = await new Promise<{ code: number; stderr: string }>((resolve) =>
    execFile(process.execPath, [cli, 'bank', '--persona', 'alice'], (err, _out, stderr) =>
      resolve({ code: err ? Number(err.code) : 0, stderr }),
    ),
  );
  expect(bad.code).toBe(2);
  expect(bad.stderr).toMatch(/^unknown family bank\nusage: npm run check:sites/);
});
