import type { ManagedPage } from '../src/browser/managed-page';
import { Gestures } from '../src/human/gestures';
import { planTyping } from '../src/human/keyboard-plan';
import { seededRng } from '../src/human/random';
import type { Fixture } from '@persona-browser/testkit/fixture';
import { until } from '@persona-browser/testkit/waker';
import type { InProcessBrowser } from './in-process';
import { startFixturePage } from './fixture-page';
import { inMainWorld } from './main-world';

/**
 * A gesture stopped by its call's deadline stops at once and hands the page back usable: no
 * key or mouse button is left held down, and the page's lock is free for the next call.
 */

let browser: InProcessBrowser;
let site: Fixture;
let mp: ManagedPage;

beforeAll(async () => {
  ({ site, browser, mp } = await startFixturePage());
});
afterAll(async () => {
  await browser?.close();
  await site?.close();
});

async function load(query = ''): Promise<void> {
  await mp.page.goto(`${site.url}/input${query}`, { waitUntil: 'domcontentloaded' });
  // Key releases too, which the page's own log leaves out.
  await inMainWorld(mp, () => {
    const w = window as unknown as { __ups: string[] };
    w.__ups = [];
    addEventListener('keyup', (e) => w.__ups.push(e.key), true);
  });
}

const read = <T>(expr: string): Promise<T> => inMainWorld<T>(mp, expr);

test('typing stopped at its deadline lets go of Shift; the field keeps what was typed; the page works on', async () => {
  await load();
  const text = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ'.repeat(2);
  await mp.run('type-text', { deadlineMs: 60_000 }, (call) =>
    new Gestures(mp, call).click('#name'),
  );
  const started = performance.now();
  // Without slips, so that whatever was typed is exactly the start of the text.
  const plan = planTyping(text, seededRng(1), { charsPerTypo: Infinity });
  const typing = mp.run('type-text', { deadlineMs: 1_500 }, (call) =>
    new Gestures(mp, call).type(text, plan),
  );
  await expect(typing).rejects.toThrow(/stopped at its deadline/);
  // It stopped at the deadline, not when the typing would have ended (about 12 s).
  expect(performance.now() - started).toBeLessThan(5_000);
  const count = (xs: string[], k: string): number => xs.filter((x) => x === k).length;
  // The release of Shift reaches the page after the call has stopped.
  const { downs, ups } = await until(
    async () => {
      const keys = await read<Array<{ key: string }>>('__log.keys');
      const released = await read<string[]>('__ups');
      const held = count(
        keys.map((d) => d.key),
        'Shift',
      );
      return held > 0 && count(released, 'Shift') >= held ? { downs: keys, ups: released } : null;
    },
    5_000,
    'the page to see as many Shift releases as Shift presses',
  );
  expect(
    count(
      downs.map((d) => d.key),
      'Shift',
    ),
  ).toBeGreaterThan(0);
  expect(count(ups, 'Shift')).toBe(
    count(
      downs.map((d) => d.key),
      'Shift',
    ),
  );
  const typed = await read<string>("document.getElementById('name').value");
  expect(typed.length).toBeGreaterThan(0);
  expect(text.startsWith(typed)).toBe(true);
  expect(typed.length).toBeLessThan(text.length);
  // The lock is free and no modifier is stuck: the next key is a plain lower-case one.
  expect(mp.lock.locked).toBe(false);
  await mp.run('press', {}, (call) => new Gestures(mp, call).type('x'));
  const last = (await read<Array<{ key: string; shift: boolean }>>('__log.keys')).at(-1);
  expect(last).toMatchObject({ key: 'x', shift: false });
});

test('a press stopped at its deadline is released: the mouse button is not left down', async () => {
  await load();
  // The page answers the press late (its handler is busy for 3 s): the deadline falls
  // between the press and the release.
  await inMainWorld(mp, () => {
    document.getElementById('btn')?.addEventListener('mousedown', () => {
      const until = performance.now() + 3_000;
      while (performance.now() < until) {
        /* busy */
      }
    });
  });
  const box = await read<{ x: number; y: number }>(
    "(() => { const r = document.getElementById('btn').getBoundingClientRect(); return { x: r.left + r.width / 2, y: r.top + r.height / 2 }; })()",
  );
  await mp.run('hover', { deadlineMs: 60_000 }, (call) => new Gestures(mp, call).hoverAt(box));
  const press = mp.run('click', { deadlineMs: 1_200 }, (call) =>
    new Gestures(mp, call).clickAt(box),
  );
  await expect(press).rejects.toThrow(/stopped at its deadline/);
  // The page is busy for 3 s after the press; the release reaches it then.
  await until(
    async () => ((await read<unknown[]>('__log.ups')).length > 0 ? true : null),
    10_000,
    'the mouse button release to reach the page',
  );
  const downs = await read<unknown[]>('__log.downs');
  const ups = await read<unknown[]>('__log.ups');
  expect(downs).toHaveLength(1);
  expect(ups).toHaveLength(1);
  // The next click is an ordinary one.
  await mp.run('click', {}, (call) => new Gestures(mp, call).clickAt(box));
  expect(await read<unknown[]>('__log.downs')).toHaveLength(2);
  expect(await read<unknown[]>('__log.ups')).toHaveLength(2);
});
