/**
 * scroll-page as the page sees it: every wheel event is one whole notch of 80–120 px, even
 * when the page's main thread is busy (Chromium merges wheel events that wait for it), and the
 * main burst the page saw adds up to the `scrolled_distance` the call reported.
 */
import { useObservedWorker } from '@persona-browser/testkit/observed-worker';
import { sleep } from '@persona-browser/testkit/worker';

type Body = Record<string, any>;
type Wheel = { dy: number; trusted: boolean };

const { ctx, prim } = useObservedWorker();
const wheels = (): Promise<Wheel[]> => ctx.eye.read<Wheel[]>('/input', '__log.wheels');

/**
 * The page's wheel log once the notches the call sent have reached the page's script. The
 * browser hands wheel events to the script at the page's next frame, however late its busy main
 * thread comes to it: two frames on, every notch sent is in the log. (With 150 ms of quiet as
 * its only wait, CI once found no back-scroll after a call of 500 px.) Then it waits until
 * nothing more comes.
 */
async function settledWheels(): Promise<Wheel[]> {
  const framed = (): Promise<Wheel[]> =>
    ctx.eye.read<Wheel[]>(
      '/input',
      'new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(() => done(__log.wheels))))',
    );
  let last = await framed();
  for (let i = 0; i < 40; i += 1) {
    await sleep(150);
    const now = await framed();
    if (now.length === last.length) return now;
    last = now;
  }
  return last;
}

/**
 * Scrolls by each distance in turn on a freshly loaded page and returns, per call, what it
 * reported and the wheel events the page received meanwhile.
 */
async function scrollAll(
  distances: number[],
  pageScript?: string,
): Promise<Array<{ distance: number; reported: number; seen: number[] }>> {
  const served = ctx.site.served('/input');
  const nav = await ctx.w.call<Body>('POST', '/api/v1/ops/p/navigate', {
    body: { url: `${ctx.site.url}/input` },
  });
  expect(nav.body.success).toBe(true);
  // Into the document this navigation loaded, not the one before it.
  if (pageScript) await ctx.eye.readInputServedAfter(served, pageScript);
  await prim('hover-position', { x: 150, y: 700 });
  const calls = [];
  for (const distance of distances) {
    const before = (await wheels()).length;
    const r = await prim('scroll-page', { distance });
    expect(r.body.success).toBe(true);
    const all = await settledWheels();
    expect(all.every((e) => e.trusted)).toBe(true);
    calls.push({
      distance,
      reported: r.body.scrolled_distance as number,
      seen: all.slice(before).map((e) => e.dy),
    });
    // The recovery moves the pointer away; the next scroll starts over the page again.
    await prim('hover-position', { x: 150, y: 700 });
  }
  return calls;
}

function expectWholeNotches(calls: Array<{ distance: number; reported: number; seen: number[] }>) {
  for (const { distance, reported, seen } of calls) {
    const label = `distance ${distance}: page saw ${seen.join(' ')}`;
    const outside = seen.filter(
      (dy) => !(Number.isInteger(dy) && Math.abs(dy) >= 80 && Math.abs(dy) <= 120),
    );
    expect({ label, outside }).toEqual({ label, outside: [] });
    const main = seen.filter((dy) => Math.sign(dy) === Math.sign(distance));
    expect({ label, main: main.reduce((a, b) => a + b, 0) }).toEqual({ label, main: reported });
  }
}

describe('scroll-page wheel notches', () => {
  test('every wheel event the page sees is a whole notch of 80–120 px; the main burst adds up to scrolled_distance', async () => {
    const calls = await scrollAll([500, -400, 1000, 333, 150, 40]);
    expectWholeNotches(calls);
    // Ordinary requests roll back a little; a short one is a single burst of at least a notch.
    for (const c of calls) {
      const back = c.seen.filter((dy) => Math.sign(dy) !== Math.sign(c.distance));
      expect({ d: c.distance, back: back.length > 0 }).toEqual({
        d: c.distance,
        back: Math.abs(c.distance) >= 334,
      });
    }
    const tiny = calls.find((c) => c.distance === 40);
    expect(tiny?.seen).toHaveLength(1);
  }, 90_000);

  test('a page whose main thread is busy still sees one wheel event per notch', async () => {
    // The page's own script keeps its main thread busy nearly all the time (80 ms out of
    // every 85): wheel events sent without waiting for the page queue up behind it and reach
    // it merged, two or three notches as one event of 160–360 px.
    const busy = `(() => { setInterval(() => { const end = performance.now() + 80; while (performance.now() < end); }, 5); return true; })()`;
    const calls = await scrollAll([1500, -1200], busy);
    expectWholeNotches(calls);
  }, 90_000);
});
