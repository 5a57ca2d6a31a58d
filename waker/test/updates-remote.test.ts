import type { Browser, Page } from 'puppeteer-core';
import type { SupervisorStatus } from '@persona-browser/contracts';
import { launchClientBrowser } from '@persona-browser/testkit/client-browser';
import { shown, sidewaysOverflow } from '@persona-browser/testkit/on-screen';
import type { PanelServer } from '@persona-browser/testkit/panel-server';
import {
  openFleetPanel,
  panelTestHooks,
  servePanel,
  supervisorStatus,
} from '@persona-browser/testkit/panel-server';

/**
 * The fleet panel's Updates card and the supervisor's remote (`remote` in GET /api/supervisor):
 * a remote the supervisor cannot reach from where it runs is a warning a person cannot miss,
 * naming the remote and giving git's whole reason; a reachable one, one not checked yet, or a
 * supervisor that does not report it, show nothing. The panel in a real browser, the
 * supervisor's status canned in front of it.
 */

const KEY = 'updates-key';
const URL_SEEN = '/home/me/persona-browser';
/** git's whole answer for a clone whose origin is a path the container does not have. */
const GIT_SAID = [
  "fatal: '/home/me/persona-browser' does not appear to be a git repository",
  'fatal: Could not read from remote repository.',
  '',
  'Please make sure you have the correct access rights',
  'and the repository exists.',
].join('\n');

type RemoteSeen = SupervisorStatus['remote'];

/** The remote the canned supervisor reports now; undefined: an older one without the field. */
let remote: RemoteSeen | undefined;

let stand: PanelServer;
let client: { browser: Browser; close(): Promise<void> };
let page: Page;
const scriptErrors: string[] = [];

beforeAll(async () => {
  stand = await servePanel(KEY, (api) => {
    api.get('/personas', (_req, res) => {
      res.json({ personas: [] });
    });
    api.get('/metrics', (_req, res) => {
      res.json({ interval_s: 5, window_s: 60, samples: [] });
    });
    api.get('/supervisor', (_req, res) => {
      res.json(supervisorStatus({ remote }));
    });
  });
  client = await launchClientBrowser();
});

panelTestHooks(scriptErrors, () => [client, stand]);

async function openPanel(width: number): Promise<void> {
  page = await openFleetPanel(client.browser, stand.base, {
    key: KEY,
    width,
    errors: scriptErrors,
  });
  await page.waitForSelector('#updates-state[data-state="idle"]', { timeout: 20_000 });
}

/** Waits for the next read of the supervisor's status to be shown (the card polls every 5 s). */
async function nextRead(): Promise<void> {
  // The card writes the time of a read ("Read 10:00:05") just before it draws that read.
  const summary = await page.$eval('#updates-summary', (e) => e.textContent);
  await page
    .waitForFunction(
      (before) => document.getElementById('updates-summary')?.textContent !== before,
      { timeout: 20_000 },
      summary,
    )
    .catch((e: Error) => {
      throw new Error(
        `the panel never showed a read of /api/supervisor after "${summary}": ${e.message}`,
      );
    });
}

test.each([360, 1280])(
  "at %i px, a remote it cannot reach: a warning naming it, with git's whole reason",
  async (px) => {
    remote = {
      url: URL_SEEN,
      reachable: false,
      checked_at: new Date().toISOString(),
      error: GIT_SAID,
    };
    await openPanel(px);
    await page.waitForSelector('#updates-remote:not([hidden])', { timeout: 10_000 });
    expect(await shown(page, '#updates-remote')).toBe(true);
    const warning = await page.$eval('#updates-remote', (e) => ({
      text: (e as HTMLElement).innerText,
      role: e.getAttribute('role'),
      cut: Array.from(e.querySelectorAll('*')).some(
        (c) => c.scrollWidth > c.clientWidth + 1 || c.scrollHeight > c.clientHeight + 1,
      ),
    }));
    expect(warning.role).toBe('alert');
    expect(warning.text).toContain(URL_SEEN);
    // Every line git said, the last one included: not only "and the repository exists."
    for (const line of GIT_SAID.split('\n').filter(Boolean)) expect(warning.text).toContain(line);
    expect(warning.text).toMatch(/reachable from where the supervisor runs/);
    expect(warning.cut).toBe(false);
    expect(await sidewaysOverflow(page)).toBe(0);
    // It stands above the card's details, where a person looks first.
    const order = await page.$$eval('#updates > *', (kids) => kids.map((k) => k.id || k.tagName));
    expect(order.indexOf('updates-remote')).toBeLessThan(order.indexOf('DL'));
    await page.close();
  },
);

test('the remote answers again: the warning goes', async () => {
  remote = {
    url: URL_SEEN,
    reachable: false,
    checked_at: new Date().toISOString(),
    error: GIT_SAID,
  };
  await openPanel(1280);
  await page.waitForSelector('#updates-remote:not([hidden])', { timeout: 10_000 });
  remote = { url: URL_SEEN, reachable: true, checked_at: new Date().toISOString(), error: null };
  await nextRead();
  expect(await shown(page, '#updates-remote')).toBe(false);
  await page.close();
});

test.each([
  [
    'a reachable remote',
    { url: URL_SEEN, reachable: true, checked_at: '2026-11-26T08:00:00Z', error: null },
  ],
  ['a remote not checked yet', { url: URL_SEEN, reachable: null, checked_at: null, error: null }],
  ['a supervisor that does not report its remote', undefined],
] as const)('%s: no warning', async (_what, seen) => {
  remote = seen === undefined ? undefined : { ...seen };
  await openPanel(1280);
  await nextRead();
  expect(await shown(page, '#updates')).toBe(true);
  expect(await shown(page, '#updates-remote')).toBe(false);
  await page.close();
});
