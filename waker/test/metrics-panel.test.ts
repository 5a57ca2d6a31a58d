import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'puppeteer-core';
import type { PersonaInfo } from '@persona-browser/contracts';
import { launchClientBrowser } from '@persona-browser/testkit/client-browser';
import { enterKey, openKeyCard } from '@persona-browser/testkit/panel-key';
import { MetricsSampler, requestsPerHour } from '../src/metrics';
import type { PanelServer } from '@persona-browser/testkit/panel-server';
import { persona, servePanel } from '@persona-browser/testkit/panel-server';
import { until } from '@persona-browser/testkit/waker';

/**
 * The fleet panel in a real (headless) Chromium against a stand-in of the waker's API: the
 * panel files and uPlot served as the waker serves them, metrics from a real MetricsSampler
 * watching real processes, requests per hour from real request log files. The persona list
 * and the wake/sleep/restart answers are canned: the real waker is checked end to end after
 * the merge. This proves the page: rows, links, buttons calling the right routes with the
 * bearer, plots drawn, and clear errors for a wrong key or a waker that is gone.
 */
const KEY = 'fleet key/with#odd&chars';
const ALICE_COLOR = [0x24, 0x58, 0xd3];
/** When carol's back-off tries again, as the waker lists it. */
const RETRY_AT = '2031-03-04T05:06:07.000Z';

let stand: PanelServer;
let base: string;
let browser: Browser;
let client: { browser: Browser; close(): Promise<void> };
let personasDir: string;
let sampler: MetricsSampler;
let busyTree: ChildProcess;
let calls: PanelServer['calls'];

/** The persona list as the waker would answer it now. */
const personas = (): PersonaInfo[] => [
  persona('alice', 5101, {
    commit: {
      hash: 'abcdef1234567890',
      subject: 'Fix the <b>thing</b>',
      date: '2026-11-20T10:00:00Z',
    },
  }),
  persona('bob', 5102, {
    mode: 'sleepy',
    state: 'sleeping',
    depth: 'light',
    idle_seconds: null,
    last_request: null,
  }),
  persona('carol', 5103, {
    state: 'crashed',
    error: 'container exited with code 137',
    retry_at: RETRY_AT,
  }),
];

function writeRequests(name: string, hoursAgo: number[]): void {
  const dir = path.join(personasDir, name, 'requests');
  fs.mkdirSync(dir, { recursive: true });
  for (const h of hoursAgo) {
    const at = new Date(Date.now() - h * 3_600_000).toISOString();
    const file = path.join(dir, `${at.slice(0, 10)}.csv`);
    const head = fs.existsSync(file) ? '' : 'time,event,id,method,kind,name,path,status,ms\n';
    fs.appendFileSync(
      file,
      `${head}${at},start,0000abcd,POST,ops,navigate,/api/v1/ops/p/navigate,,\n` +
        `${at},end,0000abcd,POST,ops,navigate,/api/v1/ops/p/navigate,200,15\n`,
    );
  }
}

beforeAll(async () => {
  personasDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-panel-personas-'));
  writeRequests('alice', [0, 0, 1, 5, 30]);
  writeRequests('bob', [2]);
  // A real busy process stands in for alice's browser, so her CPU line is well above zero.
  busyTree = spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' });
  sampler = new MetricsSampler({
    intervalS: 1,
    // A short window: the plots span the window, so a few samples fill a good part of them.
    windowS: 8,
    instances: () => [
      { name: 'alice', pid: busyTree.pid ?? null },
      { name: 'bob', pid: null },
      { name: 'carol', pid: null },
    ],
  });
  sampler.start();

  stand = await servePanel(KEY, (api) => {
    api.get('/personas', (_req, res) => {
      res.json({ personas: personas() });
    });
    api.get('/metrics', (_req, res) => {
      res.json(sampler.body());
    });
    api.get('/personas/:name/requests', async (req, res) => {
      const hours = Number(req.query.hours);
      res.json({
        name: req.params.name,
        hours,
        requests: await requestsPerHour(path.join(personasDir, req.params.name), hours),
      });
    });
    api.post('/personas/:name/:action', (req, res) => {
      res.json({ message: `${req.params.action} accepted for ${req.params.name}` });
    });
  });
  base = stand.base;
  calls = stand.calls;

  client = await launchClientBrowser();
  browser = client.browser;
});

afterAll(async () => {
  await client?.close();
  sampler?.stop();
  busyTree?.kill('SIGKILL');
  await stand?.close();
  fs.rmSync(personasDir, { recursive: true, force: true });
});

async function openPanel(): Promise<Page> {
  const page = await browser.newPage();
  await page.setViewport({ width: 1280, height: 1000 });
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await openKeyCard(page, base + '/');
  (page as Page & { errors: string[] }).errors = errors;
  return page;
}

const rowState = (page: Page, name: string) =>
  page.$eval(`tr[data-persona="${name}"]`, (tr) => (tr as HTMLElement).dataset.state);

/** How many pixels of the chart's canvas are (close to) the colour. */
function pixelsOf(page: Page, chart: string, rgb: number[]): Promise<number> {
  return page.$eval(
    `[data-chart="${chart}"] canvas`,
    (c, want) => {
      const canvas = c;
      const data = canvas.getContext('2d')!.getImageData(0, 0, canvas.width, canvas.height).data;
      let n = 0;
      for (let i = 0; i < data.length; i += 4) {
        if (
          data[i + 3]! > 200 &&
          Math.abs(data[i]! - want[0]!) < 40 &&
          Math.abs(data[i + 1]! - want[1]!) < 40 &&
          Math.abs(data[i + 2]! - want[2]!) < 40
        ) {
          n += 1;
        }
      }
      return n;
    },
    rgb,
  );
}

test('a wrong key: a clear 401 message, and the panel asks again', async () => {
  const page = await openPanel();
  expect(await page.$eval('#personas-empty', (e) => e.textContent)).toMatch(/service key/);
  await enterKey(page, 'not the key');
  await page.waitForSelector('#conn-banner:not([hidden])');
  const banner = await page.$eval('#conn-banner', (e) => e.textContent);
  expect(banner).toMatch(/Wrong service key/);
  expect(banner).toMatch(/401/);
  expect(await page.$eval('#key-form', (e) => (e as HTMLElement).hidden)).toBe(false);
  expect(await page.$$('tr[data-persona]')).toHaveLength(0);
  expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
  expect((page as Page & { errors: string[] }).errors).toEqual([]);
  await page.close();
});

test('rows, links, buttons with the bearer, and plots', async () => {
  const page = await openPanel();
  await enterKey(page, KEY);
  await page.waitForSelector('tr[data-persona="carol"]');
  expect(await page.$eval('#conn-banner', (e) => (e as HTMLElement).hidden)).toBe(true);
  expect(await page.$eval('#key-form', (e) => (e as HTMLElement).hidden)).toBe(true);

  // Rows: state, port, commit, last request, error.
  expect(await rowState(page, 'alice')).toBe('running');
  expect(await rowState(page, 'bob')).toBe('sleeping');
  expect(await rowState(page, 'carol')).toBe('crashed');
  const alice = await page.$eval('tr[data-persona="alice"]', (e) => (e as HTMLElement).innerText);
  expect(alice).toContain('5101');
  expect(alice).toContain('abcdef1');
  expect(alice).toMatch(/1\d s ago/);
  const commitTitle = await page.$eval('tr[data-persona="alice"] code', (e) => e.title);
  expect(commitTitle).toContain('Fix the <b>thing</b>'); // text, not markup
  expect(await page.$eval('tr[data-persona="bob"]', (e) => (e as HTMLElement).innerText)).toMatch(
    /none yet/,
  );
  expect(
    await page.$eval('tr[data-persona="carol"] [data-field="error"]', (e) => e.textContent),
  ).toBe('container exited with code 137');
  // When the waker tries again, under the error; a persona with no try waiting shows none.
  const retry = await page.$eval('tr[data-persona="carol"] [data-field="retry"]', (e) =>
    (e as HTMLElement).innerText.trim(),
  );
  expect(retry).toMatch(/^next try at \S/);
  expect(retry).toContain(String(new Date(RETRY_AT).getFullYear()));
  expect(await page.$('tr[data-persona="bob"] [data-field="retry"]')).toBeNull();
  // How deep a sleeping persona sleeps, beside its state; none for one awake.
  const depth = await page.$eval('tr[data-persona="bob"] [data-field="depth"]', (e) => ({
    text: (e as HTMLElement).innerText.trim(),
    title: (e as HTMLElement).title,
    shown: (e as HTMLElement).getBoundingClientRect().width > 0,
  }));
  expect(depth).toMatchObject({ text: 'light', shown: true });
  expect(depth.title).toMatch(/^Light sleep: /);
  expect(await page.$('tr[data-persona="alice"] [data-field="depth"]')).toBeNull();

  // Links: the persona's own port on this host; the key in the fragment, never in a query.
  const hrefs = await page.$$eval('tr[data-persona="alice"] a[data-link]', (as) =>
    as.map((a) => [(a as HTMLElement).dataset.link, a.href]),
  );
  expect(Object.fromEntries(hrefs)).toEqual({
    panel: 'http://127.0.0.1:5101/',
    live: `http://127.0.0.1:5101/vnc/#key=${encodeURIComponent(KEY)}`,
  });
  expect(new URL(Object.fromEntries(hrefs).live).search).toBe('');

  // Buttons: wake is pointless on a running persona, sleep on a sleeping one.
  const disabled = (name: string, action: string) =>
    page.$eval(`button[data-persona="${name}"][data-action="${action}"]`, (b) => b.disabled);
  expect(await disabled('alice', 'wake')).toBe(true);
  expect(await disabled('alice', 'sleep')).toBe(false);
  expect(await disabled('bob', 'wake')).toBe(false);
  expect(await disabled('bob', 'sleep')).toBe(true);
  for (const [name, action] of [
    ['bob', 'wake'],
    ['alice', 'sleep'],
    ['carol', 'restart'],
  ] as const) {
    const before = calls.length;
    await page.click(`button[data-persona="${name}"][data-action="${action}"]`);
    await page.waitForFunction(
      (t) =>
        Array.from(document.querySelectorAll('.msg-text')).some((m) => m.textContent.includes(t)),
      {},
      `${action} accepted for ${name}`,
    );
    const posted = calls.slice(before).filter((c) => c.method === 'POST');
    expect(posted).toEqual([
      { method: 'POST', path: `/api/personas/${name}/${action}`, auth: `Bearer ${KEY}` },
    ]);
  }
  // Every API call carried the key.
  expect(calls.filter((c) => c.auth === `Bearer ${KEY}`).length).toBeGreaterThan(3);

  // Rows are updated in place, not rebuilt under the pointer by the 3 s refresh.
  const row = await page.$('tr[data-persona="alice"]');
  const listReads = () => calls.filter((c) => c.path === '/api/personas').length;
  const readsBefore = listReads();

  // Plots: CPU and memory from the metrics window, requests per hour for every persona.
  await page.waitForFunction(
    () => Number((document.querySelector('[data-chart="cpu"]') as HTMLElement).dataset.points) >= 5,
    { timeout: 20_000 },
  );
  const series = await page.$$eval('[data-chart]', (cs) =>
    Object.fromEntries(
      cs.map((c) => [
        (c as HTMLElement).dataset.chart,
        [(c as HTMLElement).dataset.series, Number((c as HTMLElement).dataset.points)],
      ]),
    ),
  );
  expect(series.cpu[0]).toBe('alice,bob,carol');
  expect(series.mem[0]).toBe('alice,bob,carol');
  await page.waitForFunction(
    () =>
      (document.querySelector('[data-chart="requests"]') as HTMLElement).dataset.points === '48',
  );
  expect(
    await page.$eval('[data-chart="requests"]', (c) => (c as HTMLElement).dataset.series),
  ).toBe('alice,bob,carol');
  // Alice's colour is drawn: her busy process on the CPU chart, her memory, her requests.
  expect(await pixelsOf(page, 'cpu', ALICE_COLOR)).toBeGreaterThan(100);
  expect(await pixelsOf(page, 'mem', ALICE_COLOR)).toBeGreaterThan(100);
  expect(await pixelsOf(page, 'requests', ALICE_COLOR)).toBeGreaterThan(50);
  // The panel reads the list again only once it has shown the read before: a third read
  // means two were shown.
  await until(
    async () => (listReads() >= readsBefore + 3 ? true : null),
    30_000,
    'the panel to show two more reads of /api/personas (a third one sent)',
  );
  expect(await row!.evaluate((e) => e.isConnected)).toBe(true);
  const legend = await page.$eval('[data-chart="cpu"] .u-legend', (e) => e.textContent);
  expect(legend).toContain('alice');
  expect(legend).toContain('host');
  // Each row shows its persona's newest numbers; a persona that is down has none.
  const usage = (name: string) =>
    page.$eval(`tr[data-persona="${name}"] [data-field="usage"]`, (e) => e.textContent);
  expect(await usage('alice')).toMatch(/^\d+\.\d % · \d+ MB$/);
  expect(await usage('bob')).toBe('—');
  // The host card shows the latest sample.
  expect(await page.$eval('#host-details', (e) => (e as HTMLElement).innerText)).toMatch(
    /Memory used\s+\d+ of \d+ MB/,
  );

  // The key is asked once per tab: a reload goes straight to the rows.
  await page.reload({ waitUntil: 'load' });
  await page.waitForSelector('tr[data-persona="alice"]');
  expect(await page.$eval('#key-form', (e) => (e as HTMLElement).hidden)).toBe(true);
  expect((page as Page & { errors: string[] }).errors).toEqual([]);
  await page.close();
});

test('the waker gone: a clear message that it cannot be reached', async () => {
  const page = await openPanel();
  await enterKey(page, KEY);
  await page.waitForSelector('tr[data-persona="alice"]');
  await stand.close();
  await page.waitForSelector('#conn-banner:not([hidden])', { timeout: 15_000 });
  const banner = await page.$eval('#conn-banner', (e) => e.textContent);
  expect(banner).toMatch(/cannot be reached/);
  expect((page as Page & { errors: string[] }).errors).toEqual([]);
  await page.close();
});
