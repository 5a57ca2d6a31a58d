import fs from 'node:fs';
import path from 'node:path';
import type { Page } from 'puppeteer-core';
import type { ClientBrowser } from '@persona-browser/testkit/client-browser';
import { launchClientBrowser } from '@persona-browser/testkit/client-browser';
import type { Fixture } from '@persona-browser/testkit/fixture';
import { startFixture } from '@persona-browser/testkit/fixture';
import { shownTexts } from '@persona-browser/testkit/on-screen';
import { manifest, writePluginTree } from '@persona-browser/testkit/plugin-tree';
import type { RunningWorker } from '@persona-browser/testkit/worker';
import { KEY, startWorker } from '@persona-browser/testkit/worker';
import { openWithKey } from '@persona-browser/testkit/panel-key';
import { decodeApng, share } from './apng-decode';

/**
 * With RECORDING on, every plugin call leaves a recording of the screen (taken of the X display,
 * not through the browser): an animated PNG whose frames show what the page showed, listed and
 * served by the API, named by a failed call's bundle, withheld when the page holds a secret.
 */
const SECRET = 'recorded-secret-5521';

/** Paints the whole page one colour, then another, a moment each. */
const paint = (colours: string[], end: string): string => `module.exports.default = {
  async run(ctx) {
    await ctx.page.goto(ctx.setting('REC_BASE_URL') + '/');
    for (const c of ${JSON.stringify(colours)}) {
      await ctx.page.evaluate((c) => {
        document.body.innerHTML = '';
        document.documentElement.style.background = c;
        document.body.style.background = c;
      }, c);
      await ctx.sleep(500);
    }
    ${end}
  } };`;

const root = writePluginTree(
  [
    {
      name: 'rec/paint',
      manifest: manifest([]),
      js: paint(['rgb(255, 0, 0)', 'rgb(0, 0, 255)'], 'return { success: true };'),
    },
    {
      name: 'rec/fails',
      manifest: manifest([]),
      js: paint(['rgb(0, 255, 0)'], "return { success: false, error: 'green gave up' };"),
    },
    {
      name: 'rec/secret',
      manifest: manifest([]),
      js: `module.exports.default = { async run(ctx) {
        await ctx.page.goto(ctx.setting('REC_BASE_URL') + '/');
        await ctx.page.evaluate((s) => { document.body.textContent = 'code ' + s; },
          ctx.secret('REC_TOKEN'));
        await ctx.sleep(300);
        return { success: true };
      } };`,
    },
  ],
  {
    'rec/family.json': {
      settings: { REC_BASE_URL: { default: 'http://127.0.0.1:9/' } },
      secrets: ['REC_TOKEN'],
    },
  },
);

let w: RunningWorker;
let site: Fixture;
/** The answers of the two calls every test reads: painted red then blue, and green then failed. */
let painted: Record<string, any>;
let failed: Record<string, any>;

beforeAll(async () => {
  site = await startFixture();
  w = await startWorker({
    env: {
      PLUGINS_DIR: root,
      REC_BASE_URL: site.url,
      REC_TOKEN: SECRET,
      RECORDING: 'true',
      RECORDING_FPS: '5',
    },
  });
  await w.waitInitialized();
  await w.call('POST', '/api/v1/ops/create-page', { body: { page_id: 'a' } });
  painted = (await run('rec/paint')).body;
  failed = (await run('rec/fails')).body;
}, 60_000);
afterAll(async () => {
  await w?.stop();
  await site?.close();
});

const run = (name: string) => w.call<Record<string, any>>('POST', `/api/v1/a/plugin/${name}`);
const newest = async (): Promise<Record<string, any>> =>
  (await w.call<any>('GET', '/api/v1/recordings')).body.recordings[0];

async function file(id: string): Promise<Response> {
  return fetch(`${w.url}/api/v1/recordings/${id}/recording.png`, {
    headers: { authorization: 'Bearer test-service-key' },
  });
}

const RED: [number, number, number] = [255, 0, 0];
const BLUE: [number, number, number] = [0, 0, 255];
const GREEN: [number, number, number] = [0, 255, 0];

test('a plugin call leaves a playable recording whose frames show the page red, then blue', async () => {
  expect(painted).toEqual({ success: true, page_id: 'a' });
  const list = (await w.call<any>('GET', '/api/v1/recordings')).body.recordings as any[];
  const rec = list.find((x) => x.plugin === 'rec/paint');
  expect(rec).toMatchObject({ plugin: 'rec/paint', page_id: 'a', outcome: 'ok', missing: null });
  expect(rec.duration_ms).toBeGreaterThanOrEqual(1000);

  const meta = (await w.call<any>('GET', `/api/v1/recordings/${rec.id}`)).body.recording;
  const res = await file(rec.id as string);
  expect(res.headers.get('content-type')).toBe('image/png');
  const apng = decodeApng(Buffer.from(await res.arrayBuffer()));
  expect([apng.width, apng.height]).toEqual([meta.width, meta.height]);
  expect(apng.frames.length).toBe(meta.frames);
  // The colours as the screen showed them, in order; a frame mostly one colour counts.
  const seen: string[] = [];
  for (const f of apng.frames) {
    const c = share(apng, f, RED) > 0.3 ? 'red' : share(apng, f, BLUE) > 0.3 ? 'blue' : 'other';
    if (seen.at(-1) !== c) seen.push(c);
  }
  expect(seen.filter((c) => c !== 'other')).toEqual(['red', 'blue']);
  // Frames last as long as the screen did: together about the call's length.
  const total = apng.frames.reduce((n, f) => n + f.delayMs, 0);
  expect(total).toBeGreaterThan(rec.duration_ms * 0.7);
  // Control: a page that was never green shows no green frame.
  expect(apng.frames.some((f) => share(apng, f, GREEN) > 0.3)).toBe(false);
});

test("a failed call's bundle names its recording, which shows the failure's screen", async () => {
  expect(failed).toMatchObject({ success: false, error: 'green gave up' });
  const bundle = (await w.call<any>('GET', `/api/v1/bundles/${failed.debug_id}`)).body.bundle;
  const rec = (await w.call<any>('GET', `/api/v1/recordings/${bundle.recording}`)).body.recording;
  expect(rec).toMatchObject({ plugin: 'rec/fails', outcome: 'failed', missing: null });
  const apng = decodeApng(Buffer.from(await (await file(rec.id)).arrayBuffer()));
  const last = apng.frames.at(-1);
  expect(last && share(apng, last, GREEN)).toBeGreaterThan(0.3);
});

test('a page holding a secret keeps no pixels: the recording says why', async () => {
  await run('rec/secret');
  const rec = await newest();
  expect(rec).toMatchObject({
    plugin: 'rec/secret',
    outcome: 'ok',
    frames: 0,
    missing: 'withheld: the page holds a secret value',
  });
  expect((await file(rec.id as string)).status).toBe(404);
  const dir = path.join(w.dataDir, 'recordings', rec.id as string);
  expect(fs.readdirSync(dir)).toEqual(['meta.json']);
});

test('unknown ids and path tricks are a 404 in the envelope; the key is needed', async () => {
  const id = (await newest()).id as string;
  fs.writeFileSync(path.join(w.dataDir, 'outside.png'), 'x');
  for (const p of [
    '/api/v1/recordings/20990101-000000-00000000',
    '/api/v1/recordings/20990101-000000-00000000/recording.png',
    `/api/v1/recordings/..%2Foutside.png`,
    `/api/v1/recordings/..%2F..%2Foutside.png/recording.png`,
  ]) {
    const r = await w.call<any>('GET', p);
    expect([p, r.status, r.body.success, r.body.page_id]).toEqual([p, 404, false, null]);
  }
  expect((await w.call<any>('GET', `/api/v1/recordings/${id}`, { auth: false })).status).toBe(401);
});

describe('the panel', () => {
  let client: ClientBrowser | undefined;
  afterAll(() => client?.close());

  /**
   * The colours the shown <img> shows on screen (a 16 by 9 grid of it), from every frame the
   * browser draws (a screencast) until all of `want` were seen or `ms` passed. Screenshots taken
   * in turn can fall in step with the looping animation and see one phase only. The frames are
   * read back through a canvas (a canvas given the animated image itself draws only its first
   * frame).
   */
  async function coloursShown(page: Page, want: string[], ms: number): Promise<string[]> {
    const img = await page.$('#record-img');
    await img?.scrollIntoView();
    const box = await img?.boundingBox();
    if (!box) throw new Error('no recording shown');
    const session = await page.createCDPSession();
    const frames: string[] = [];
    let arrived = (): void => undefined;
    session.on('Page.screencastFrame', (f) => {
      frames.push(f.data);
      arrived();
      session.send('Page.screencastFrameAck', { sessionId: f.sessionId }).catch(() => undefined);
    });
    const seen = new Set<string>();
    const end = Date.now() + ms;
    await session.send('Page.startScreencast', { format: 'png', everyNthFrame: 1 });
    try {
      while (Date.now() < end && !want.every((c) => seen.has(c))) {
        const frame = frames.shift();
        if (frame === undefined) {
          // The next frame, or the deadline, whichever comes first.
          await new Promise<void>((r) => {
            const timer = setTimeout(r, Math.max(0, end - Date.now()));
            arrived = () => {
              clearTimeout(timer);
              r();
            };
          });
          continue;
        }
        const cells = await page.evaluate(
          async (png: string, b: { x: number; y: number; width: number; height: number }) => {
            const still = new Image();
            still.src = `data:image/png;base64,${png}`;
            await still.decode();
            const canvas = document.createElement('canvas');
            canvas.width = 16;
            canvas.height = 9;
            const g = canvas.getContext('2d');
            if (!g) return [];
            g.imageSmoothingEnabled = false;
            // The frame is the viewport at the device's scale: the image's box, scaled alike.
            const k = still.naturalWidth / window.innerWidth;
            g.drawImage(still, b.x * k, b.y * k, b.width * k, b.height * k, 0, 0, 16, 9);
            const d = g.getImageData(0, 0, 16, 9).data;
            const out: string[] = [];
            for (let i = 0; i < d.length; i += 4) out.push(`${d[i]},${d[i + 1]},${d[i + 2]}`);
            return out;
          },
          frame,
          box,
        );
        for (const c of cells) seen.add(c);
      }
    } finally {
      await session.send('Page.stopScreencast').catch(() => undefined);
      await session.detach().catch(() => undefined);
    }
    return [...seen];
  }

  test('lists bundles and recordings and plays a recording in its <img>', async () => {
    client = await launchClientBrowser();
    const page = await client.browser.newPage();
    await page.setViewport({ width: 1280, height: 900 });
    await openWithKey(page, `${w.url}/`, KEY);
    await page.waitForSelector('#recordings-body tr', { timeout: 20_000 });
    const rows = await shownTexts(page, '#recordings-body tr');
    const paintRow = rows.findIndex((t) => /rec\/paint\s*a\s*ok/.test(t));
    expect(paintRow).toBeGreaterThanOrEqual(0);
    expect(rows).toContainEqual(expect.stringMatching(/rec\/fails\s*a\s*failed/));
    const bundles = await shownTexts(page, '#bundles-body tr');
    expect(bundles).toEqual([expect.stringContaining('green gave up')]);

    await page.click(`#recordings-body tr:nth-child(${paintRow + 1}) button`);
    await page.waitForFunction(
      () => {
        const img = document.getElementById('record-img') as HTMLImageElement;
        return !img.hidden && img.complete && img.naturalWidth > 0;
      },
      { timeout: 20_000 },
    );
    // The browser plays it: its centre goes red and blue as the page did.
    const seen = await coloursShown(page, ['255,0,0', '0,0,255'], 8_000);
    expect(seen).toEqual(expect.arrayContaining(['255,0,0', '0,0,255']));
    expect(seen).not.toContain('0,255,0');

    // A bundle opens with its screenshot, and plays its recording: the green page.
    await page.click('#bundles-body tr button');
    await page.waitForSelector('#record-files button', { timeout: 20_000 });
    await page.click('#record-files button');
    await page.waitForFunction(
      () => document.getElementById('record-title')?.textContent?.startsWith('Recording'),
      { timeout: 20_000 },
    );
    await page.waitForFunction(
      () => (document.getElementById('record-img') as HTMLImageElement).naturalWidth > 0,
      { timeout: 20_000 },
    );
    expect(await coloursShown(page, ['0,255,0'], 8_000)).toContain('0,255,0');
  }, 40_000);
});
