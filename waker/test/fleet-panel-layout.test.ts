import type { Browser, Page } from 'puppeteer-core';
import type { MetricsBody, PersonaInfo, SupervisorStatus } from '@persona-browser/contracts';
import { launchClientBrowser } from '@persona-browser/testkit/client-browser';
import { boxes, sidewaysOverflow, spillingOut } from '@persona-browser/testkit/on-screen';
import type { PanelServer } from '@persona-browser/testkit/panel-server';
import {
  openFleetPanel,
  panelTestHooks,
  persona,
  servePanel,
  supervisorStatus,
} from '@persona-browser/testkit/panel-server';

/**
 * The fleet panel's layout as a person sees it at a phone's, a tablet's and a desktop's window
 * width, in a real (headless) browser: the panel's own files in front of canned answers with
 * the long names, errors and commit subjects that real fleets have.
 */

const KEY = 'layout-key';
const WIDTHS = [360, 768, 1024, 1280];

const personas = (): PersonaInfo[] => [
  persona('alice', 5101, {
    proxy: {
      country: 'IT',
      exit_ip: '203.0.113.7',
      session: 's1',
      proxy_errors: 3,
      failing: true,
    },
  }),
  persona('bob-with-a-rather-long-name', 5102, {
    mode: 'sleepy',
    state: 'sleeping',
    idle_seconds: null,
    last_request: null,
  }),
  persona('carol', 5103, {
    state: 'crashed',
    error: 'container exited with code 137 after the browser ran out of memory on a heavy page',
  }),
];

function metrics(): MetricsBody {
  const now = Math.floor(Date.now() / 1000);
  return {
    interval_s: 5,
    window_s: 3600,
    samples: [0, 1, 2].map((i) => ({
      ts: now - 10 + i * 5,
      system: {
        cpu_pct: 20 + i,
        mem_used_mb: 4000,
        mem_total_mb: 24000,
        load1: 0.5,
        load5: 0.4,
        temp_c: null,
      },
      instances: { alice: { pid: 4242, procs: 5, cpu_pct: 13, rss_mb: 500 } },
    })),
  };
}

const supervisor = (): Partial<SupervisorStatus> =>
  supervisorStatus({
    commit: {
      hash: 'abcdef1234567890abcdef1234567890abcdef12',
      subject: 'A commit subject long enough to need a line of its own on a narrow screen',
      date: '2026-11-20T10:00:00Z',
    },
    healthy_commit: 'abcdef1234567890abcdef1234567890abcdef12',
  });

let stand: PanelServer;
let client: { browser: Browser; close(): Promise<void> };
let page: Page;
const scriptErrors: string[] = [];

beforeAll(async () => {
  stand = await servePanel(KEY, (api) => {
    api.get('/personas', (_req, res) => {
      res.json({ personas: personas() });
    });
    api.get('/metrics', (_req, res) => {
      res.json(metrics());
    });
    api.get('/personas/:name/requests', (req, res) => {
      res.json({ name: req.params.name, hours: 48, requests: [] });
    });
    api.get('/supervisor', (_req, res) => {
      res.json(supervisor());
    });
  });
  client = await launchClientBrowser();
  page = await openFleetPanel(client.browser, stand.base, {
    key: KEY,
    width: 1280,
    errors: scriptErrors,
  });
  await page.waitForFunction(
    () =>
      document.querySelectorAll('tr[data-persona]').length === 3 &&
      document.querySelector('[data-persona="alice"] [data-field="usage"]')?.textContent !== '—' &&
      !(document.getElementById('updates') as HTMLElement).hidden,
    { timeout: 20_000 },
  );
});

panelTestHooks(scriptErrors, () => [client, stand]);

async function atWidth(width: number): Promise<void> {
  await page.setViewport({ width, height: 900 });
  await page.evaluate(
    () => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => r(null)))),
  );
}

test.each(WIDTHS)('at %i px nothing sticks out of the window sideways', async (px) => {
  await atWidth(px);
  expect(await sidewaysOverflow(page)).toBe(0);
  // The cards fit the window; a wide table scrolls inside its own card.
  const cards = await boxes(page, 'main > .card:not([hidden])');
  expect(cards.length).toBeGreaterThan(3);
  for (const card of cards) expect(card.right).toBeLessThanOrEqual(px);
  expect(await spillingOut(page, 'main > .card', '.table-wrap, .chart-plot')).toEqual([]);
});

test.each(WIDTHS.filter((px) => px >= 1024))(
  'at %i px every persona button is inside the card, in sight',
  async (px) => {
    await atWidth(px);
    const [card] = await boxes(page, '.card:has(#personas-table)');
    const [wrap] = await boxes(page, '.card:has(#personas-table) .table-wrap');
    const buttons = await boxes(page, 'button[data-action]');
    // Wake, Sleep, Restart and Share for each of the three personas.
    expect(buttons).toHaveLength(12);
    const visibleRight = Math.min(card!.right, wrap!.right, px);
    for (const b of buttons) expect(b.right).toBeLessThanOrEqual(visibleRight);
  },
);

test.each(WIDTHS)('at %i px a persona\'s "CPU · memory" stays on one line', async (px) => {
  await atWidth(px);
  const lines = await page.$eval('[data-persona="alice"] [data-field="usage"]', (cell) => {
    const range = document.createRange();
    range.selectNodeContents(cell);
    return new Set(Array.from(range.getClientRects(), (r) => Math.round(r.top))).size;
  });
  expect(
    await page.$eval('[data-persona="alice"] [data-field="usage"]', (c) => c.textContent),
  ).toBe('13.0 % · 500 MB');
  expect(lines).toBe(1);
});
