import net from 'node:net';
import { costOf, readBoxAnswer, toViewportBox } from '../src/vision/answer';
import type { VisionErrorCause, VisionOptions } from '../src/vision/client';
import { VisionClient, VisionError } from '../src/vision/client';
import { pngSize } from '../src/vision/png';
import type { VisionStandin } from '@persona-browser/testkit/vision-standin';
import { decodePng, makePng, startVisionStandin } from '@persona-browser/testkit/vision-standin';

// Distinctive keys, so that a leak into any message is easy to see.
const FREE = 'AIzaFREE-standin-secret-0001';
const PAID = 'AIzaPAID-standin-secret-0002';
const VIEW = { width: 1280, height: 720 };
const PNG = makePng(VIEW.width, VIEW.height);

let s: VisionStandin;
beforeAll(async () => {
  s = await startVisionStandin();
});
afterAll(async () => {
  await s?.close();
});
beforeEach(() => {
  s.reset();
  s.expectImage = { width: VIEW.width, height: VIEW.height };
  s.objects.set('the Button', [250, 250, 500, 500]);
});

const client = (o: Partial<VisionOptions> = {}): VisionClient =>
  new VisionClient({
    baseUrl: s.url,
    model: 'gemini-2.5-flash',
    keyGratis: FREE,
    keyPaga: PAID,
    priceInputPerMTok: 0.3,
    priceOutputPerMTok: 2.5,
    timeoutMs: 2_000,
    ...o,
  });

/** The VisionError a call fails with; also checks that no key rides along anywhere in it. */
async function failure(work: Promise<unknown>, cause: VisionErrorCause): Promise<VisionError> {
  const err: unknown = await work.then(
    () => new Error('expected the call to fail'),
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(VisionError);
  const v = err as VisionError;
  expect({ cause: v.cause, message: v.message }).toEqual({ cause, message: expect.any(String) });
  for (const text of [v.message, String(v), JSON.stringify(v), v.stack ?? '']) {
    expect(text).not.toContain(FREE);
    expect(text).not.toContain(PAID);
  }
  return v;
}

const keysSeen = (): Array<string | null> => s.requests.map((r) => r.key);

describe('the request', () => {
  test('is a generateContent call the real service accepts: model path, key header, PNG, prompt', async () => {
    s.keys.set(FREE, { kind: 'answer' });
    await client().locate(PNG, 'the Button', VIEW);
    expect(s.requests).toHaveLength(1);
    const r = s.requests[0]!;
    expect(r).toMatchObject({
      method: 'POST',
      path: '/v1beta/models/gemini-2.5-flash:generateContent',
      key: FREE,
      query: '',
      image: { width: 1280, height: 720 },
      responseMimeType: 'application/json',
      problems: [],
      status: 200,
    });
    expect(r.prompt).toContain('"the Button"');
    expect(r.prompt).toMatch(/box_2d/);
    expect(r.prompt).toMatch(/0-1000/);
  });

  test('takes the screenshot as a Buffer or as base64 text alike', async () => {
    s.keys.set(FREE, { kind: 'answer' });
    const a = await client().locate(PNG, 'the Button', VIEW);
    const b = await client().locate(PNG.toString('base64'), 'the Button', VIEW);
    expect(b.bounding_box).toEqual(a.bounding_box);
    expect(s.requests.map((r) => r.problems)).toEqual([[], []]);
  });

  test('the stand-in really decodes PNGs (a corrupt one is refused)', () => {
    expect(decodePng(PNG)).toEqual({ width: 1280, height: 720 });
    expect(pngSize(PNG)).toEqual({ width: 1280, height: 720 });
    const corrupt = Buffer.from(PNG);
    corrupt[40] = (corrupt[40] ?? 0) ^ 0xff;
    expect(() => decodePng(corrupt)).toThrow(/CRC|pixel|inflate|incorrect/i);
    expect(pngSize(Buffer.from('not a png at all, not at all'))).toBeNull();
  });
});

describe('box mapping', () => {
  test('[ymin, xmin, ymax, xmax] on 0–1000 becomes [x1, y1, x2, y2] in CSS px, with its centre', async () => {
    s.keys.set(FREE, { kind: 'answer' });
    const r = await client().locate(PNG, 'the Button', VIEW);
    // x: 250‰ and 500‰ of 1280; y: 250‰ and 500‰ of 720.
    expect(r.bounding_box).toEqual([320, 180, 640, 360]);
    expect({ x: r.center_x, y: r.center_y }).toEqual({ x: 480, y: 270 });
  });

  test('a HiDPI screenshot (2x pixels) maps to the same CSS box', async () => {
    s.keys.set(FREE, { kind: 'answer' });
    s.expectImage = { width: 2560, height: 1440 };
    const r = await client().locate(makePng(2560, 1440), 'the Button', VIEW);
    expect(r.bounding_box).toEqual([320, 180, 640, 360]);
  });

  test('swapped corners are put in order and values beyond the scale are clamped', () => {
    expect(toViewportBox([500, 500, 250, 250], VIEW)).toEqual([320, 180, 640, 360]);
    expect(toViewportBox([-10, 0, 1010, 1000], VIEW)).toEqual([0, 0, 1280, 720]);
    expect(toViewportBox([333, 333, 667, 667], { width: 1000, height: 600 })).toEqual([
      333, 199.8, 667, 400.2,
    ]);
  });

  test('answers in a code fence or as a single object are read; an empty list is "nothing"', () => {
    expect(readBoxAnswer('```json\n[{"box_2d": [1, 2, 3, 4], "label": "x"}]\n```')).toEqual([
      1, 2, 3, 4,
    ]);
    expect(readBoxAnswer('{"box_2d": [5, 6, 7, 8]}')).toEqual([5, 6, 7, 8]);
    expect(readBoxAnswer(' [] ')).toBeNull();
    expect(() => readBoxAnswer('[{"box_2d": [1, 2, 3]}]')).toThrow(/four numbers/);
    expect(() => readBoxAnswer('The button is top left.')).toThrow(/not JSON/);
  });
});

describe('tokens and cost', () => {
  test('cost = input tokens × input price + output (answer + thinking) tokens × output price', async () => {
    s.keys.set(FREE, { kind: 'answer' });
    s.thoughts = 120;
    const r = await client().locate(PNG, 'the Button', VIEW);
    const u = s.requests[0]!.usage!;
    expect(u.promptTokenCount).toBeGreaterThan(258);
    expect(r.tokens_used).toBe(u.totalTokenCount);
    expect(Number.isInteger(r.tokens_used)).toBe(true);
    const expected = (u.promptTokenCount * 0.3 + (u.candidatesTokenCount + 120) * 2.5) / 1_000_000;
    expect(r.costs_usd).toBeCloseTo(expected, 12);
    expect(r.duration_seconds).toBeGreaterThan(0);
    expect(r.duration_seconds).toBeLessThan(2);
  });

  test('the arithmetic by hand', () => {
    expect(costOf({ input: 1_000_000, output: 0, total: 1_000_000 }, 0.3, 2.5)).toBe(0.3);
    expect(costOf({ input: 1000, output: 200, total: 1200 }, 0.3, 2.5)).toBe(0.0008);
    expect(costOf({ input: 1290, output: 20, total: 1310 }, 0.1, 0.4)).toBe(0.000137);
  });
});

describe('keys', () => {
  test('the free key goes first and the paid one is left alone when it answers', async () => {
    s.keys.set(FREE, { kind: 'answer' });
    s.keys.set(PAID, { kind: 'answer' });
    expect((await client().locate(PNG, 'the Button', VIEW)).key_used).toBe('gratis');
    expect(keysSeen()).toEqual([FREE]);
  });

  test('a free key answered 429 RESOURCE_EXHAUSTED falls back to the paid key', async () => {
    s.keys.set(FREE, { kind: 'quota' });
    s.keys.set(PAID, { kind: 'answer' });
    const r = await client().locate(PNG, 'the Button', VIEW);
    expect(r.key_used).toBe('paga');
    expect(r.bounding_box).toEqual([320, 180, 640, 360]);
    expect(keysSeen()).toEqual([FREE, PAID]);
    expect(s.requests.map((q) => q.status)).toEqual([429, 200]);
  });

  test('RESOURCE_EXHAUSTED under another HTTP status is out of quota too', async () => {
    s.keys.set(FREE, { kind: 'fail', code: 403, status: 'RESOURCE_EXHAUSTED', message: 'Quota' });
    s.keys.set(PAID, { kind: 'answer' });
    expect((await client().locate(PNG, 'the Button', VIEW)).key_used).toBe('paga');
  });

  test('without a free key the paid key is used directly', async () => {
    s.keys.set(PAID, { kind: 'answer' });
    const r = await client({ keyGratis: null }).locate(PNG, 'the Button', VIEW);
    expect(r.key_used).toBe('paga');
    expect(keysSeen()).toEqual([PAID]);
  });
});

describe('failures, each with its own clear message and never a key in it', () => {
  test('no key configured names both variables and sends nothing', async () => {
    const c = client({ keyGratis: null, keyPaga: null });
    expect(c.configured).toBe(false);
    const e = await failure(c.locate(PNG, 'the Button', VIEW), 'no_key');
    expect(e.message).toContain('VISION_API_KEY_GRATIS');
    expect(e.message).toContain('VISION_API_KEY_PAGA');
    expect(() => c.assertConfigured()).toThrow(VisionError);
    expect(s.requests).toHaveLength(0);
  });

  test('a refused free key (403 PERMISSION_DENIED) is reported, without spending the paid key', async () => {
    s.keys.set(FREE, { kind: 'denied' });
    s.keys.set(PAID, { kind: 'answer' });
    const e = await failure(client().locate(PNG, 'the Button', VIEW), 'key_refused');
    expect(e.message).toMatch(/refused the key in VISION_API_KEY_GRATIS.*403 PERMISSION_DENIED/);
    expect(e.httpStatus).toBe(403);
    expect(keysSeen()).toEqual([FREE]);
  });

  test('an invalid paid key (400 "API key not valid") is a refused key naming its variable', async () => {
    // PAID is not registered with the stand-in: it answers like the service does to a bad key.
    const e = await failure(
      client({ keyGratis: null }).locate(PNG, 'the Button', VIEW),
      'key_refused',
    );
    expect(e.message).toMatch(/VISION_API_KEY_PAGA.*API key not valid/);
  });

  test('401 UNAUTHENTICATED is a refused key', async () => {
    s.keys.set(FREE, { kind: 'fail', code: 401, status: 'UNAUTHENTICATED', message: 'No auth' });
    await failure(client().locate(PNG, 'the Button', VIEW), 'key_refused');
  });

  test('rate-limited free key and no paid key says so and how to fix it', async () => {
    s.keys.set(FREE, { kind: 'quota' });
    const e = await failure(
      client({ keyPaga: null }).locate(PNG, 'the Button', VIEW),
      'rate_limited',
    );
    expect(e.message).toMatch(/VISION_API_KEY_GRATIS.*set VISION_API_KEY_PAGA/);
  });

  test('both keys rate-limited', async () => {
    s.keys.set(FREE, { kind: 'quota' });
    s.keys.set(PAID, { kind: 'quota' });
    const e = await failure(client().locate(PNG, 'the Button', VIEW), 'rate_limited');
    expect(e.message).toContain('VISION_API_KEY_GRATIS and VISION_API_KEY_PAGA');
    expect(keysSeen()).toEqual([FREE, PAID]);
  });

  test('a service slower than the timeout is cut off at the deadline', async () => {
    s.keys.set(FREE, { kind: 'slow', ms: 3_000 });
    const started = Date.now();
    const e = await failure(client({ timeoutMs: 300 }).locate(PNG, 'the Button', VIEW), 'timeout');
    expect(Date.now() - started).toBeLessThan(1_500);
    expect(e.message).toMatch(/within 0\.3 s.*VISION_TIMEOUT_SECONDS/);
  });

  test('a caller that gives up cancels the call', async () => {
    s.keys.set(FREE, { kind: 'slow', ms: 3_000 });
    await failure(client().locate(PNG, 'the Button', VIEW, AbortSignal.timeout(100)), 'aborted');
  });

  test('an upstream error status is reported with its status, and a key it quotes is redacted', async () => {
    s.keys.set(FREE, {
      kind: 'fail',
      code: 500,
      status: 'INTERNAL',
      message: `An internal error has occurred for key ${FREE}`,
    });
    const e = await failure(client().locate(PNG, 'the Button', VIEW), 'upstream');
    expect(e.message).toMatch(
      /HTTP 500 INTERNAL: An internal error has occurred for key \[redacted\]/,
    );
    expect(e.httpStatus).toBe(500);
  });

  test('an answer that is not the JSON asked for is unreadable', async () => {
    s.keys.set(FREE, { kind: 'text', text: 'Sure! The button is near the top left.' });
    const e = await failure(client().locate(PNG, 'the Button', VIEW), 'bad_answer');
    expect(e.message).toMatch(/could not be read: the text is not JSON/);
  });

  test('an empty list means the object is not on the page', async () => {
    s.keys.set(FREE, { kind: 'answer' });
    const e = await failure(client().locate(PNG, 'a purple elephant', VIEW), 'not_found');
    expect(e.message).toContain('"a purple elephant"');
  });

  test('a service that cannot be reached', async () => {
    const srv = net.createServer();
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
    const { port } = srv.address() as net.AddressInfo;
    await new Promise((r) => srv.close(r));
    const e = await failure(
      client({ baseUrl: `http://127.0.0.1:${port}` }).locate(PNG, 'the Button', VIEW),
      'unreachable',
    );
    expect(e.message).toMatch(/could not be reached \(ECONNREFUSED\)/);
  });
});
