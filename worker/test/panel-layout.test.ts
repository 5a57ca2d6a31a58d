import type { Browser, Page } from 'puppeteer-core';
import type { ClientBrowser } from '@persona-browser/testkit/client-browser';
import { launchClientBrowser } from '@persona-browser/testkit/client-browser';
import type { Box } from '@persona-browser/testkit/on-screen';
import {
  boxes,
  clipped,
  shareRow,
  sidewaysOverflow,
  spillingOut,
} from '@persona-browser/testkit/on-screen';
import type { RunningWorker } from '@persona-browser/testkit/worker';
import { KEY, startWorker } from '@persona-browser/testkit/worker';
import { openWithKey } from '@persona-browser/testkit/panel-key';

/**
 * The control panel's layout as a person sees it at a phone's, a tablet's and a desktop's
 * window width, in a real (headless) browser against the real worker: what sits beside what,
 * what is cut and what sticks out.
 */

const WAIT_MS = 20_000;
const WIDTHS = [360, 768, 1024, 1280, 1600];

let w: RunningWorker;
let client: ClientBrowser | undefined;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  w = await startWorker({ persona: 'layout' });
  await w.waitInitialized();
  for (const id of ['one', 'two']) {
    expect(
      (await w.call('POST', '/api/v1/ops/create-page', { body: { page_id: id } })).status,
    ).toBe(200);
  }
  client = await launchClientBrowser();
  browser = client.browser;
  page = await browser.newPage();
  await page.setViewport({ width: 1280, height: 900 });
  await openWithKey(page, `${w.url}/`, KEY);
  await page.waitForFunction(
    () =>
      document.querySelectorAll('#nav-details dd').length === 6 &&
      document.querySelectorAll('#pool-body tr').length === 2,
    { timeout: WAIT_MS },
  );
});

afterAll(async () => {
  await client?.close();
  await w?.stop();
});

async function atWidth(width: number): Promise<void> {
  await page.setViewport({ width, height: 900 });
  // The new width is laid out once the page has it and the place of every element stays the
  // same over three animation frames (the panel's own scripts may still move things after the
  // first: a status refresh, a live frame sized to its card).
  await page.waitForFunction(
    (w: number) => {
      const g = window as unknown as { layoutSeen?: { text: string; frames: number } };
      if (window.innerWidth !== w) return false;
      const text = Array.from(document.querySelectorAll('main *'))
        .map((e) => {
          const r = e.getBoundingClientRect();
          return `${r.x},${r.y},${r.width},${r.height}`;
        })
        .join(';');
      const seen = g.layoutSeen;
      g.layoutSeen = { text, frames: seen?.text === text ? seen.frames + 1 : 0 };
      return g.layoutSeen.frames >= 3;
    },
    { polling: 'raf', timeout: WAIT_MS },
    width,
  );
}

test.each(WIDTHS)('Browser card at %i px: each label shares its row with its value', async (px) => {
  await atWidth(px);
  // Labels and values read in one go: the status refresh draws the card again, and the rows
  // above it may move between two reads.
  const pairs = await boxes(page, '#nav-details dt, #nav-details dd');
  const labels = pairs.filter((_, i) => i % 2 === 0);
  const values = pairs.filter((_, i) => i % 2 === 1);
  const texts = await page.$$eval('#nav-details dt', (ds) => ds.map((d) => d.textContent));
  expect(texts).toEqual([
    'Initialized',
    'Browser context',
    'Page pool',
    'Pages',
    'Idle and free',
    'Slowmo',
  ]);
  expect(values).toHaveLength(labels.length);
  const apart = labels
    .map((label, i) => ({ label: texts[i], box: label, value: values[i] as Box }))
    .filter(({ box, value }) => !shareRow(box, value) || value.x < box.right);
  expect(apart.map((a) => a.label)).toEqual([]);
});

test.each(WIDTHS)('Pages table at %i px: no heading and no page id is cut', async (px) => {
  await atWidth(px);
  expect(await clipped(page, '#pool-table th')).toEqual([]);
  expect(await clipped(page, '#pool-body td.id-cell')).toEqual([]);
  expect(await sidewaysOverflow(page)).toBe(0);
  expect(await spillingOut(page, 'main .card', '.table-wrap')).toEqual([]);
});

test.each(WIDTHS.filter((px) => px >= 768))(
  'the page forms at %i px: the id fields start and end at the same place',
  async (px) => {
    await atWidth(px);
    const [create, destroy] = await boxes(page, '#create-id, #destroy-id');
    expect(Math.abs(create!.x - destroy!.x)).toBeLessThan(1);
    expect(Math.abs(create!.right - destroy!.right)).toBeLessThan(1);
  },
);

test.each([360, 1280])(
  'the Live view card at %i px: "Open in a new tab" stands level with "Hand back"',
  async (px) => {
    await atWidth(px);
    const centres = await page.evaluate(() => {
      const range = document.createRange();
      range.selectNodeContents(document.getElementById('live-open')!);
      const link = range.getBoundingClientRect();
      const button = document.getElementById('handback-btn')!.getBoundingClientRect();
      return { link: link.top + link.height / 2, button: button.top + button.height / 2 };
    });
    expect(Math.abs(centres.link - centres.button)).toBeLessThan(2);
  },
);
