import type { Fixture } from '@persona-browser/testkit/fixture';
import { startFixture } from '@persona-browser/testkit/fixture';
import { Observer } from '@persona-browser/testkit/observer';
import type { VisionStandin } from '@persona-browser/testkit/vision-standin';
import { boxFor, startVisionStandin } from '@persona-browser/testkit/vision-standin';
import type { RunningWorker } from '@persona-browser/testkit/worker';
import { startWorker } from '@persona-browser/testkit/worker';

/**
 * misc/detect-bounding-box with a vision key, against the loopback stand-in of the vision
 * service: the box it answers is where the object really is, and clicking its centre hits it.
 */
type Body = Record<string, any>;

/** Where the fixture page `/input` puts `#btn` (CSS pixels, page not scrolled). */
const BUTTON = { left: 300, top: 200, width: 120, height: 40 };

let site: Fixture;
let vision: VisionStandin;
let w: RunningWorker;
let eye: Observer;
let viewport: { width: number; height: number };

beforeAll(async () => {
  site = await startFixture();
  vision = await startVisionStandin();
  w = await startWorker({
    env: {
      VISION_BASE_URL: vision.url,
      VISION_API_KEY_GRATIS: 'free-key',
      VISION_API_KEY_PAGA: '',
      DEVTOOLS_PORT: '0',
    },
  });
  await w.waitInitialized();
  await w.call('POST', '/api/v1/ops/create-page', { body: { page_id: 'v' } });
  await w.call('POST', '/api/v1/ops/v/navigate', { body: { url: `${site.url}/input` } });
  eye = await Observer.attach(w);
  const size = await eye.read<{ w: number; h: number }>(
    '/input',
    '({ w: innerWidth, h: innerHeight })',
  );
  viewport = { width: size.w, height: size.h };
  vision.keys.set('free-key', { kind: 'answer' });
  vision.objects.set('the Button', boxFor(BUTTON, viewport));
});
afterAll(async () => {
  await eye?.detach();
  await w?.stop();
  await vision?.close();
  await site?.close();
});

const detect = (description: string) =>
  w.call<Body>('POST', '/api/v1/v/plugin/misc/detect-bounding-box', { body: { description } });

test('the box is where the object is on screen, and its centre clicks it', async () => {
  const r = await detect('  the Button ');
  expect(r.status).toBe(200);
  expect(r.body).toEqual({
    success: true,
    page_id: 'v',
    description: 'the Button',
    bounding_box: [expect.any(Number), expect.any(Number), expect.any(Number), expect.any(Number)],
    center_x: expect.any(Number),
    center_y: expect.any(Number),
    tokens_used: expect.any(Number),
    costs_usd: expect.any(Number),
    duration_seconds: expect.any(Number),
  });
  // The service saw one well-formed request asking for the description.
  expect(vision.requests.map((q) => [q.key, q.problems, q.status])).toEqual([
    ['free-key', [], 200],
  ]);
  expect(vision.requests[0]!.prompt).toContain('the Button');
  const [x1, y1, x2, y2] = r.body.bounding_box as number[];
  const slack = Math.max(viewport.width, viewport.height) / 1000 + 0.01;
  expect(Math.abs(x1! - BUTTON.left)).toBeLessThanOrEqual(slack);
  expect(Math.abs(y1! - BUTTON.top)).toBeLessThanOrEqual(slack);
  expect(Math.abs(x2! - (BUTTON.left + BUTTON.width))).toBeLessThanOrEqual(slack);
  expect(Math.abs(y2! - (BUTTON.top + BUTTON.height))).toBeLessThanOrEqual(slack);

  const click = await w.call<Body>('POST', '/api/v1/primitive/v/click-position', {
    body: { x: r.body.center_x, y: r.body.center_y },
  });
  expect(click.body.success).toBe(true);
  const clicks = await eye.read<Array<{ id: string; trusted: boolean }>>('/input', '__log.clicks');
  expect(clicks.at(-1)).toMatchObject({ id: 'btn', trusted: true });
});

test('an object the model cannot find, and a blank description', async () => {
  const missing = await detect('a purple elephant');
  expect(missing.status).toBe(200);
  expect(missing.body).toMatchObject({ success: false, page_id: 'v' });
  expect(missing.body.error).toMatch(/^Vision search failed: /);
  const blank = await detect('   ');
  expect([blank.status, blank.body.error]).toEqual([400, 'description must not be blank']);
});
