import type { Fixture } from '@persona-browser/testkit/fixture';
import { startFixture } from '@persona-browser/testkit/fixture';
import { Observer } from '@persona-browser/testkit/observer';
import type { VisionStandin } from '@persona-browser/testkit/vision-standin';
import { boxFor, startVisionStandin } from '@persona-browser/testkit/vision-standin';
import type { RunningWorker } from '@persona-browser/testkit/worker';
import { sleep, startWorker } from '@persona-browser/testkit/worker';

type Body = Record<string, any>;

const FREE = 'free-key';
const PAID = 'paid-key';
/** Where the fixture page `/input` puts `#btn` (CSS pixels, page not scrolled). */
const BUTTON = { left: 300, top: 200, width: 120, height: 40 };

let site: Fixture;
let s: VisionStandin;

beforeAll(async () => {
  site = await startFixture();
  s = await startVisionStandin();
});
afterAll(async () => {
  await s?.close();
  await site?.close();
});

const noKeyIn = (text: string): void => {
  expect(text).not.toContain(FREE);
  expect(text).not.toContain(PAID);
};

// One browser at a time: this block's worker is stopped before the next block starts its own.
describe('search-object on a worker with both vision keys', () => {
  let w: RunningWorker;
  let eye: Observer;
  let viewport: { width: number; height: number };

  const search = (body: unknown, page = 'v') =>
    w.call<Body>('POST', `/api/v1/ops/${page}/search-object`, { body });

  beforeAll(async () => {
    w = await startWorker({
      env: {
        VISION_BASE_URL: s.url,
        VISION_API_KEY_GRATIS: FREE,
        VISION_API_KEY_PAGA: PAID,
        VISION_TIMEOUT_SECONDS: '3',
        DEVTOOLS_PORT: '0',
      },
    });
    await w.waitInitialized();
    await w.call('POST', '/api/v1/ops/create-page', { body: { page_id: 'v' } });
    const nav = await w.call<Body>('POST', '/api/v1/ops/v/navigate', {
      body: { url: `${site.url}/input` },
    });
    expect(nav.body.success).toBe(true);
    eye = await Observer.attach(w);
    const size = await eye.read<{ w: number; h: number; dpr: number }>(
      '/input',
      '({ w: innerWidth, h: innerHeight, dpr: devicePixelRatio })',
    );
    viewport = { width: size.w, height: size.h };
    // The screenshot the model gets must be exactly the viewport, in device pixels.
    s.expectImage = {
      width: Math.round(size.w * size.dpr),
      height: Math.round(size.h * size.dpr),
    };
  });
  afterAll(async () => {
    await eye?.detach();
    if (w) {
      for (const line of w.logs) noKeyIn(line);
      await w.stop();
    }
  });
  beforeEach(() => {
    s.keys.clear();
    s.objects.clear();
    s.requests.length = 0;
    s.objects.set('the Button', boxFor(BUTTON, viewport));
  });

  test('free key rate-limited → paid key; the answer clicks the real button', async () => {
    s.keys.set(FREE, { kind: 'quota' });
    s.keys.set(PAID, { kind: 'answer' });
    const r = await search({ description: 'the Button' });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      success: true,
      page_id: 'v',
      description: 'the Button',
      bounding_box: [
        expect.any(Number),
        expect.any(Number),
        expect.any(Number),
        expect.any(Number),
      ],
      center_x: expect.any(Number),
      center_y: expect.any(Number),
      tokens_used: expect.any(Number),
      costs_usd: expect.any(Number),
      duration_seconds: expect.any(Number),
    });
    expect(Number.isInteger(r.body.tokens_used)).toBe(true);
    expect(r.body.tokens_used).toBeGreaterThan(0);
    expect(r.body.costs_usd).toBeGreaterThan(0);
    // The stand-in saw the free key first, then the paid one, both well-formed requests.
    expect(s.requests.map((q) => q.key)).toEqual([FREE, PAID]);
    expect(s.requests.map((q) => q.problems)).toEqual([[], []]);
    expect(s.requests.map((q) => q.status)).toEqual([429, 200]);
    expect(s.requests[1]!.prompt).toContain('the Button');
    // [x1, y1, x2, y2] in CSS px: the button's rectangle, within the 0–1000 scale's rounding.
    const [x1, y1, x2, y2] = r.body.bounding_box as number[];
    const slack = Math.max(viewport.width, viewport.height) / 1000 + 0.01;
    expect(Math.abs(x1! - 300)).toBeLessThanOrEqual(slack);
    expect(Math.abs(y1! - 200)).toBeLessThanOrEqual(slack);
    expect(Math.abs(x2! - 420)).toBeLessThanOrEqual(slack);
    expect(Math.abs(y2! - 240)).toBeLessThanOrEqual(slack);
    // The centre is answered rounded to hundredths: within half a hundredth, edges included.
    expect(Math.abs(r.body.center_x - (x1! + x2!) / 2)).toBeLessThanOrEqual(0.0051);
    expect(Math.abs(r.body.center_y - (y1! + y2!) / 2)).toBeLessThanOrEqual(0.0051);

    const before = (await eye.read<unknown[]>('/input', '__log.clicks')).length;
    const click = await w.call<Body>('POST', '/api/v1/primitive/v/click-position', {
      body: { x: r.body.center_x, y: r.body.center_y },
    });
    expect(click.body.success).toBe(true);
    const clicks = await eye.read<Array<{ id: string; trusted: boolean; x: number; y: number }>>(
      '/input',
      '__log.clicks',
    );
    expect(clicks).toHaveLength(before + 1);
    expect(clicks.at(-1)).toMatchObject({ id: 'btn', trusted: true });
    expect(Math.abs(clicks.at(-1)!.x - r.body.center_x)).toBeLessThanOrEqual(1);
    expect(Math.abs(clicks.at(-1)!.y - r.body.center_y)).toBeLessThanOrEqual(1);
  });

  test('the page is free for other calls while the model is thinking', async () => {
    s.keys.set(FREE, { kind: 'slow', ms: 1_500 });
    let searchDone = false;
    const pending = search({ description: 'the Button' }).then((r) => {
      searchDone = true;
      return r;
    });
    // The stand-in has the screenshot: the lock should be released by now.
    while (s.requests.length === 0) await sleep(20);
    const other = await w.call<Body>('POST', '/api/v1/ops/v/extract-content');
    expect(other.body.success).toBe(true);
    expect(searchDone).toBe(false);
    const r = await pending;
    expect(r.body.success).toBe(true);
    expect(s.requests.map((q) => q.key)).toEqual([FREE]);
  });

  test('a refused key: 200, success false, the variable named, the key not', async () => {
    s.keys.set(FREE, { kind: 'denied' });
    s.keys.set(PAID, { kind: 'answer' });
    const r = await search({ description: 'the Button' });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ success: false, page_id: 'v', error: expect.any(String) });
    expect(r.body.error).toMatch(
      /^Vision search failed: .*refused the key in VISION_API_KEY_GRATIS/,
    );
    noKeyIn(r.body.error);
  });

  test('an object the model cannot find: 200, success false, "found nothing"', async () => {
    s.keys.set(FREE, { kind: 'answer' });
    const r = await search({ description: 'a purple elephant' });
    expect(r.status).toBe(200);
    expect(r.body.success).toBe(false);
    expect(r.body.error).toMatch(/found nothing matching "a purple elephant"/);
  });

  test('bad requests: description missing, empty or too long → 400; unknown page → 404', async () => {
    for (const body of [
      {},
      { description: '' },
      { description: '   ' },
      { description: 'x'.repeat(501) },
    ]) {
      const r = await search(body);
      expect(r.status).toBe(400);
      expect(r.body).toMatchObject({ success: false, page_id: 'v' });
      expect(r.body.error).toMatch(/description/);
    }
    const ghost = await search({ description: 'the Button' }, 'ghost');
    expect(ghost.status).toBe(404);
    expect(ghost.body).toEqual({ success: false, error: 'Page not found', page_id: 'ghost' });
    const anonymous = await w.call('POST', '/api/v1/ops/v/search-object', {
      body: { description: 'the Button' },
      auth: false,
    });
    expect(anonymous.status).toBe(401);
    expect(s.requests).toHaveLength(0);
  });
});

describe('search-object on a worker without vision keys', () => {
  let w: RunningWorker;
  beforeAll(async () => {
    s.requests.length = 0;
    w = await startWorker({
      env: { VISION_BASE_URL: s.url, VISION_API_KEY_GRATIS: '', VISION_API_KEY_PAGA: '' },
    });
    await w.waitInitialized();
    await w.call('POST', '/api/v1/ops/create-page', { body: { page_id: 'n' } });
  });
  afterAll(async () => {
    await w?.stop();
  });

  test('answers success false naming both variables, and calls nobody', async () => {
    const r = await w.call<Body>('POST', '/api/v1/ops/n/search-object', {
      body: { description: 'the Button' },
    });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ success: false, page_id: 'n', error: expect.any(String) });
    expect(r.body.error).toContain('VISION_API_KEY_GRATIS');
    expect(r.body.error).toContain('VISION_API_KEY_PAGA');
    expect(s.requests).toHaveLength(0);
  });
});
