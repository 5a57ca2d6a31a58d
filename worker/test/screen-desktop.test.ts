import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { DESKTOP_PANELS, SCREEN_SIZE } from '../src/identity/desktop';
import type { PlatformName } from '../src/identity/platform';
import type { RunningWorker } from '@persona-browser/testkit/worker';
import { startWorker } from '@persona-browser/testkit/worker';

/**
 * What a page sees of the screen and its window in a real browser on the worker's own Xvfb, for
 * each system a persona may claim: the work area less that system's panels (a top one shows as
 * availTop), the window maximised on it, and a desktop's default light colour scheme. The page
 * measures itself and posts its report back; the test evaluates nothing in the page.
 */

interface Seen {
  screen: Record<
    'width' | 'height' | 'availWidth' | 'availHeight' | 'availLeft' | 'availTop',
    number
  >;
  window: Record<
    'screenX' | 'screenY' | 'outerWidth' | 'outerHeight' | 'innerWidth' | 'innerHeight',
    number
  >;
  light: boolean;
  dark: boolean;
  canvas: string;
  canvasText: string;
}

const PROBE = `<!doctype html><html><body><div id="x"></div><script>
const el = document.getElementById('x');
const colour = (c) => { el.style.backgroundColor = c; return getComputedStyle(el).backgroundColor; };
// Read once the page has loaded and painted a frame. A script that runs while a fresh tab's
// first document is still being parsed can find the window not sized yet (outerWidth 0), a
// start-up race this test does not cover.
addEventListener('load', () => requestAnimationFrame(() => fetch('/report', { method: 'POST', body: JSON.stringify({
  screen: { width: screen.width, height: screen.height, availWidth: screen.availWidth,
    availHeight: screen.availHeight, availLeft: screen.availLeft, availTop: screen.availTop },
  window: { screenX, screenY, outerWidth, outerHeight, innerWidth, innerHeight },
  light: matchMedia('(prefers-color-scheme: light)').matches,
  dark: matchMedia('(prefers-color-scheme: dark)').matches,
  canvas: colour('Canvas'), canvasText: colour('CanvasText'),
}) })));
</script></body></html>`;

/** A loopback page that reports what it sees; `next()` waits for its next report. */
function probeSite(): Promise<{ url: string; next(): Promise<Seen>; close(): Promise<void> }> {
  let waiting: ((s: Seen) => void) | null = null;
  const server = http.createServer((req, res) => {
    if (req.method === 'POST' && req.url === '/report') {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        res.end('ok');
        waiting?.(JSON.parse(body) as Seen);
      });
      return;
    }
    res.setHeader('content-type', 'text/html');
    res.end(PROBE);
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/probe`,
        next: () => new Promise<Seen>((r) => (waiting = r)),
        close: () => new Promise<void>((r) => server.close(() => r())),
      }),
    ),
  );
}

/** What the page of a worker that claims `platform` sees. */
async function seenBy(
  site: Awaited<ReturnType<typeof probeSite>>,
  env: Record<string, string>,
): Promise<{ seen: Seen; w: RunningWorker }> {
  const w = await startWorker({ env: { BROWSER_TIMEZONE: 'Europe/Berlin', ...env } });
  try {
    await w.waitInitialized(60_000);
    await w.call('POST', '/api/v1/ops/create-page', { body: { page_id: 's' } });
    const report = site.next();
    const nav = await w.call('POST', '/api/v1/ops/s/navigate', { body: { url: site.url } });
    expect(nav.body).toMatchObject({ success: true, status_code: 200 });
    return { seen: await report, w };
  } catch (err) {
    await w.stop();
    throw err;
  }
}

describe('the screen and window of each claimed system', () => {
  let site: Awaited<ReturnType<typeof probeSite>>;
  const seen = new Map<PlatformName, Seen>();

  beforeAll(async () => {
    site = await probeSite();
    // One worker at a time: the machine has two cores.
    for (const platform of ['windows', 'macos', 'linux'] as const) {
      const run = await seenBy(site, { BROWSER_PLATFORM: platform });
      seen.set(platform, run.seen);
      await run.w.stop();
    }
  }, 120_000);
  afterAll(() => site?.close());

  test.each(['windows', 'macos', 'linux'] as const)(
    '%s: the available area is the screen less that system’s panels',
    (platform) => {
      const s = seen.get(platform)?.screen;
      const panels = DESKTOP_PANELS[platform];
      expect(s).toEqual({
        width: SCREEN_SIZE.width,
        height: SCREEN_SIZE.height,
        availWidth: SCREEN_SIZE.width,
        availHeight: SCREEN_SIZE.height - panels.top - panels.bottom,
        availLeft: 0,
        availTop: panels.top,
      });
    },
  );

  test('the figures of real desktops: Windows 11’s 48 px taskbar, a Mac’s menu bar on top', () => {
    expect(seen.get('windows')?.screen).toMatchObject({ availHeight: 1032, availTop: 0 });
    expect(seen.get('macos')?.screen).toMatchObject({ availTop: 25 });
    expect(seen.get('linux')?.screen.availHeight).toBeLessThan(1080);
  });

  test.each(['windows', 'macos', 'linux'] as const)(
    '%s: the window is maximised on the work area, with the browser’s toolbars above the page',
    (platform) => {
      const got = seen.get(platform);
      if (!got) throw new Error(`no report for ${platform}`);
      const { screen: s, window: w } = got;
      expect([w.screenX, w.screenY]).toEqual([s.availLeft, s.availTop]);
      expect([w.outerWidth, w.outerHeight]).toEqual([s.availWidth, s.availHeight]);
      expect(w.innerWidth).toBe(w.outerWidth);
      // The tab strip and toolbar: more than nothing, less than a quarter of the window.
      expect(w.outerHeight - w.innerHeight).toBeGreaterThan(40);
      expect(w.outerHeight - w.innerHeight).toBeLessThan(w.outerHeight / 4);
    },
  );

  test.each(['windows', 'macos', 'linux'] as const)(
    '%s: the light colour scheme a desktop shows by default',
    (platform) => {
      expect(seen.get(platform)).toMatchObject({
        light: true,
        dark: false,
        canvas: 'rgb(255, 255, 255)',
        canvasText: 'rgb(0, 0, 0)',
      });
    },
  );
});
