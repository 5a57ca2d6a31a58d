import { useObservedWorker } from '@persona-browser/testkit/observed-worker';
import { sleep } from '@persona-browser/testkit/worker';

type Body = Record<string, any>;
type Rect = { x: number; y: number; w: number; h: number };

const { ctx, prim } = useObservedWorker();
async function open(query = ''): Promise<void> {
  const served = ctx.site.served('/input');
  const r = await ctx.w.call<Body>('POST', '/api/v1/ops/p/navigate', {
    body: { url: `${ctx.site.url}/input${query}` },
  });
  expect(r.body.success).toBe(true);
  // The observer's own connection hears of the new document a moment after the call answers.
  await ctx.eye.readInputServedAfter(served, 'true');
}
const log = <T = any>(expr: string): Promise<T> => ctx.eye.read<T>('/input', expr);
/**
 * Rests the pointer at (x, y), which must be inside the viewport of the window's work area (the
 * screen less the desktop's panel or taskbar): a refused hover would leave the pointer wherever
 * the last test left it.
 */
async function hoverAt(x: number, y: number): Promise<void> {
  const r = await prim('hover-position', { x, y });
  expect([r.status, r.body.error]).toEqual([200, undefined]);
}
const value = (id: string): Promise<string> => log(`document.getElementById('${id}').value`);
const strictlyInside = (p: { x: number; y: number }, r: Rect): boolean =>
  p.x > r.x && p.y > r.y && p.x < r.x + r.w - 1 && p.y < r.y + r.h - 1;

async function settledScrollY(expr = 'scrollY'): Promise<number> {
  let last = await log<number>(expr);
  for (let i = 0; i < 40; i += 1) {
    await sleep(150);
    const now = await log<number>(expr);
    if (now === last) return now;
    last = now;
  }
  return last;
}

describe('mouse', () => {
  beforeAll(() => open());

  test('click-element: a trusted click inside the element, off its edge, after a curved approach', async () => {
    // From far away, so that the approach is long enough to show its curve.
    await prim('hover-position', { x: 1300, y: 700 });
    // What the other tests of this page did, in whatever order they ran, is forgotten.
    await log('for (const k of ["moves", "clicks", "downs", "ups"]) __log[k].length = 0');
    const r = await prim('click-element', { selector: '#btn' });
    expect(r.body).toMatchObject({
      success: true,
      page_id: 'p',
      selector: '#btn',
      url: `${ctx.site.url}/input`,
    });
    const clicks =
      await log<Array<{ id: string; x: number; y: number; trusted: boolean; rect: Rect }>>(
        '__log.clicks',
      );
    expect(clicks).toHaveLength(1);
    const c = clicks[0]!;
    expect(c).toMatchObject({ id: 'btn', trusted: true });
    expect(strictlyInside(c, c.rect)).toBe(true);
    expect(Math.abs(c.x - r.body.position.x)).toBeLessThanOrEqual(1);
    expect(Math.abs(c.y - r.body.position.y)).toBeLessThanOrEqual(1);
    const moves = await log<Array<{ x: number; y: number; t: number }>>('__log.moves');
    expect(moves.length).toBeGreaterThan(10);
    // Curved: the path leaves the straight line between its ends.
    const a = moves[0]!;
    const b = moves[moves.length - 1]!;
    const len = Math.hypot(b.x - a.x, b.y - a.y);
    const off = Math.max(
      ...moves.map((m) => Math.abs((b.x - a.x) * (a.y - m.y) - (a.x - m.x) * (b.y - a.y)) / len),
    );
    expect(len).toBeGreaterThan(500);
    expect(off).toBeGreaterThan(2);
    const downs = await log<Array<{ t: number }>>('__log.downs');
    const ups = await log<Array<{ t: number }>>('__log.ups');
    // The press as the page's events date it: 50–150 ms however busy the page or the machine.
    const press = ups[0]!.t - downs[0]!.t;
    expect(press).toBeGreaterThanOrEqual(49);
    expect(press).toBeLessThanOrEqual(151);
  });

  test('click-position clicks exactly there; hover moves without clicking; the pointer persists', async () => {
    const r = await prim('click-position', { x: 360, y: 215 });
    expect(r.body).toMatchObject({ success: true, position: { x: 360, y: 215 } });
    const clicks = await log<Array<{ id: string; x: number; y: number }>>('__log.clicks');
    expect(clicks.at(-1)).toMatchObject({ id: 'btn', x: 360, y: 215 });
    const before = clicks.length;
    const h = await prim('hover-element', { selector: '#small' });
    expect(h.body.success).toBe(true);
    const moves = await log<Array<{ x: number; y: number; over: string }>>('__log.moves');
    const last = moves.at(-1)!;
    expect(last.over).toBe('small');
    expect(Math.abs(last.x - h.body.position.x)).toBeLessThanOrEqual(1);
    const hp = await prim('hover-position', { x: 50, y: 60 });
    expect(hp.body.position).toEqual({ x: 50, y: 60 });
    const after = await log<Array<{ x: number; y: number }>>('__log.moves');
    // The next movement started where the last one ended.
    const firstOfNext = after[moves.length]!;
    expect(Math.hypot(firstOfNext.x - last.x, firstOfNext.y - last.y)).toBeLessThan(60);
    expect(after.at(-1)).toMatchObject({ x: 50, y: 60 });
    expect((await log<unknown[]>('__log.clicks')).length).toBe(before);
  });

  test('covered, off-screen and missing elements are refused with a clear error', async () => {
    const covered = await prim('click-element', { selector: '#cover' });
    expect(covered.body).toMatchObject({
      success: false,
      error: expect.stringMatching(/covered by div#veil/),
    });
    const below = await prim('click-element', { selector: '#below' });
    expect(below.body).toMatchObject({
      success: false,
      error: expect.stringMatching(/not visible.*scroll/),
    });
    const missing = await prim('hover-element', { selector: '#nope' });
    expect(missing.body).toMatchObject({
      success: false,
      error: expect.stringMatching(/No element matches/),
    });
    const invalid = await prim('click-element', { selector: '[[' });
    expect(invalid.status).toBe(400);
    expect(invalid.body.error).toMatch(/Invalid CSS selector/);
    for (const body of [{}, { selector: '' }, { selector: 5 }]) {
      expect((await prim('click-element', body)).status).toBe(400);
    }
    for (const body of [{ x: 'abc', y: 1 }, { x: 1 }, { x: -5, y: 10 }, { x: 10, y: 99999 }]) {
      const bad = await prim('click-position', body);
      expect(bad.status).toBe(400);
      expect(bad.body.success).toBe(false);
    }
    expect(
      (
        await ctx.w.call('POST', '/api/v1/primitive/nobody/click-position', {
          body: { x: 1, y: 1 },
        })
      ).status,
    ).toBe(404);
  });
});

describe('an element that moves during the approach', () => {
  /** Opens the page with the pointer resting far from #mover, then arms its trap. */
  async function armed(query: string): Promise<void> {
    await open(query);
    await hoverAt(100, 800);
    expect(await log<boolean>('__arm()')).toBe(true);
  }

  test('moved once: followed with a correction and clicked', async () => {
    await armed('?jump=once');
    const r = await prim('click-element', { selector: '#mover' });
    expect(r.body.success).toBe(true);
    const clicks = await log<Array<{ id: string; x: number; rect: Rect }>>('__log.clicks');
    expect(clicks).toHaveLength(1);
    expect(clicks[0]).toMatchObject({ id: 'mover' });
    expect(clicks[0]!.rect.x).toBe(1150);
  });

  test('keeps moving: refused after two corrections, nothing clicked', async () => {
    await armed('?jump=always');
    const r = await prim('click-element', { selector: '#mover' });
    expect(r.body).toMatchObject({ success: false, error: expect.stringMatching(/kept moving/) });
    expect(await log<unknown[]>('__log.clicks')).toHaveLength(0);
  });

  test('disappears: refused', async () => {
    await armed('?jump=vanish');
    const r = await prim('click-element', { selector: '#mover' });
    expect(r.body).toMatchObject({ success: false, error: expect.stringMatching(/disappeared/) });
  });
});

describe('check-visible', () => {
  beforeAll(() => open());

  test('fully visible, clipped by an overflow ancestor, below the fold, and absent', async () => {
    const full = await prim('check-visible', { selector: '#btn' });
    expect(full.body).toMatchObject({
      success: true,
      selector: '#btn',
      found: true,
      visible: true,
      fully_visible: true,
      bounding_box: { x: 300, y: 200, width: 120, height: 40 },
      intersection: { x: 300, y: 200, width: 120, height: 40 },
    });
    expect(full.body.viewport.width).toBeGreaterThan(1000);
    const half = await prim('check-visible', { selector: '#half' });
    expect(half.body).toMatchObject({
      visible: true,
      fully_visible: false,
      bounding_box: { x: 250, y: 650, width: 100, height: 100 },
      intersection: { x: 250, y: 650, width: 50, height: 50 },
    });
    const below = await prim('check-visible', { selector: '#below' });
    expect(below.body).toMatchObject({
      found: true,
      visible: false,
      fully_visible: false,
      intersection: null,
    });
    expect(below.body.bounding_box.y).toBe(3000);
    const none = await prim('check-visible', { selector: '.nothing' });
    expect(none.body).toMatchObject({
      success: true,
      found: false,
      visible: false,
      bounding_box: null,
    });
  });
});

describe('keyboard', () => {
  beforeAll(() => open());

  test('a text that could not be typed by the call deadline is refused up front, nothing typed', async () => {
    await prim('click-element', { selector: '#name' });
    await log("document.getElementById('name').value = ''");
    const keysBefore = (await log<unknown[]>('__log.keys')).length;
    // 10,000 characters at a person's pace: about 40 minutes of typing.
    const r = await prim('type-text', { text: 'typing all day '.repeat(667).slice(0, 10_000) });
    expect({ status: r.status, body: r.body }).toEqual({
      status: 400,
      body: {
        success: false,
        error: expect.stringMatching(
          /^Typing 10000 characters would take about \d+ s; one call may take at most 96 s/,
        ),
        page_id: 'p',
      },
    });
    expect((await log<unknown[]>('__log.keys')).length).toBe(keysBefore);
    expect(await value('name')).toBe('');
    const far = await prim('scroll-page', { distance: 100_000 });
    expect(far.status).toBe(400);
    expect(far.body.error).toMatch(
      /^This scroll would take about \d+ s; one call may take at most 96 s/,
    );
  });

  test('type-text: the input holds exactly the text, Unicode included, typed key by key', async () => {
    await prim('click-element', { selector: '#name' });
    // The keys the other tests of this page pressed, in whatever order they ran, are left out.
    const keysBefore = (await log<unknown[]>('__log.keys')).length;
    const text = 'Grüße aus Köln, 世界 👋 — "Quotes" & symbols: 100% OK! (fine) typing here';
    const r = await prim('type-text', { text });
    expect(r.body).toMatchObject({ success: true, text_length: Array.from(text).length });
    expect(await value('name')).toBe(text);
    const keys = (
      await log<Array<{ key: string; shift: boolean; trusted: boolean; t: number }>>('__log.keys')
    ).slice(keysBefore);
    const typed = keys.filter((k) => k.key !== 'Shift');
    expect(typed.length).toBe(r.body.chars_typed);
    expect(keys.every((k) => k.trusted)).toBe(true);
    const backspaces = typed.filter((k) => k.key === 'Backspace').length;
    expect(backspaces >= r.body.typos_made).toBe(true);
    expect(backspaces === 0).toBe(r.body.typos_made === 0);
    // Upper case comes with Shift held, as from a real keyboard.
    expect(keys.find((k) => k.key === 'G')?.shift).toBe(true);
    const gaps = typed.slice(1).map((k, i) => k.t - typed[i]!.t);
    const mean = gaps.reduce((a, b) => a + b, 0) / gaps.length;
    expect(mean).toBeGreaterThan(100);
  }, 60_000);

  test('paste-text: through the clipboard and Ctrl+V, the value is exactly the text', async () => {
    await prim('click-element', { selector: '#second' });
    const text = 'pasted ✓ ünïcödé 📋';
    const r = await prim('paste-text', { text });
    expect(r.body).toMatchObject({
      success: true,
      text_length: Array.from(text).length,
      fumbled: expect.any(Boolean),
    });
    expect(r.body.delay_before_ms).toBeGreaterThan(0);
    expect(await value('second')).toBe(text);
    const keys = await log<Array<{ key: string; code: string }>>('__log.keys');
    expect(keys.some((k) => k.code === 'KeyV')).toBe(true);
  });

  test('press-tab moves focus forward, with_shift backward; press-enter types a newline', async () => {
    await prim('click-element', { selector: '#name' });
    const t = await prim('press-tab');
    expect(t.body).toMatchObject({ success: true, key: 'Tab' });
    expect(await log('document.activeElement.id')).toBe('second');
    const back = await prim('press-tab', { with_shift: true });
    expect(back.body.key).toBe('Shift+Tab');
    expect(await log('document.activeElement.id')).toBe('name');
    await prim('click-element', { selector: '#area' });
    await prim('type-text', { text: 'ab' });
    const e = await prim('press-enter');
    expect(e.body).toMatchObject({ success: true, key: 'Enter' });
    await prim('type-text', { text: 'c' });
    expect(await value('area')).toBe('ab\nc');
  }, 30_000);
});

describe('scroll-page', () => {
  test('net movement within ±10 % of the request; scrolled_distance 1.1–1.2 times it; wheel notches of 80–120 px', async () => {
    await open();
    await hoverAt(150, 800);
    const r = await prim('scroll-page', { distance: 500 });
    expect(r.body.success).toBe(true);
    expect(r.body.scrolled_distance).toBeGreaterThanOrEqual(550);
    expect(r.body.scrolled_distance).toBeLessThanOrEqual(600);
    const y = await settledScrollY();
    expect(y).toBeGreaterThanOrEqual(450);
    expect(y).toBeLessThanOrEqual(550);
    const wheels =
      await log<Array<{ dy: number; trusted: boolean; x: number; y: number }>>('__log.wheels');
    expect(wheels.every((e) => e.trusted)).toBe(true);
    const down = wheels.filter((e) => e.dy > 0);
    expect(down.every((e) => e.dy >= 80 && e.dy <= 120)).toBe(true);
    // The recovery happens with the pointer at a random point within 100–300.
    const up = wheels.filter((e) => e.dy < 0);
    expect(up.length).toBeGreaterThan(0);
    for (const e of up) {
      expect(e.x).toBeGreaterThanOrEqual(100);
      expect(e.x).toBeLessThanOrEqual(300);
    }
    const neg = await prim('scroll-page', { distance: -400 });
    expect(neg.body.scrolled_distance).toBeLessThanOrEqual(-440);
    const y2 = await settledScrollY();
    expect(y - y2).toBeGreaterThanOrEqual(360);
    expect(y - y2).toBeLessThanOrEqual(440);
  }, 30_000);

  test('unknown fields are ignored and the default of 1000 px is used', async () => {
    await open();
    await hoverAt(150, 800);
    const r = await prim('scroll-page', { amount: 50, direction: 'up' });
    expect(r.body.scrolled_distance).toBeGreaterThanOrEqual(1100);
    expect(r.body.scrolled_distance).toBeLessThanOrEqual(1200);
    const y = await settledScrollY();
    expect(y).toBeGreaterThanOrEqual(900);
    expect(y).toBeLessThanOrEqual(1100);
    expect((await prim('scroll-page', { distance: 'far' })).status).toBe(400);
  }, 30_000);

  test('the wheel goes to what is under the pointer: a hovered inner container scrolls, the page does not', async () => {
    await open();
    await prim('hover-element', { selector: '#scroller' });
    await prim('scroll-page', { distance: 400 });
    const inner = await settledScrollY(`document.getElementById('scroller').scrollTop`);
    expect(inner).toBeGreaterThan(300);
    expect(await settledScrollY()).toBe(0);
  }, 30_000);
});

describe('reload and zoom', () => {
  test('reload-page: F5, one full reload, its status code; the page state is fresh', async () => {
    await open('?reload');
    await prim('click-position', { x: 360, y: 215 });
    const served = ctx.site.served('/input');
    const r = await prim('reload-page');
    expect(r.body).toMatchObject({
      success: true,
      key: 'F5',
      status_code: 200,
      url: `${ctx.site.url}/input?reload`,
    });
    expect(ctx.site.served('/input')).toBe(served + 1);
    // The reloaded document, once the observer sees it: the old one logged the click.
    expect(await ctx.eye.readInputServedAfter<unknown[]>(served, '__log.clicks')).toHaveLength(0);
  });

  test('zoom-page pinches the page scale around a point; reset-zoom brings it back to 100 %', async () => {
    await open();
    const z = await prim('zoom-page', { x: 400, y: 300, zoom_level: 2 });
    expect(z.body).toMatchObject({ success: true, zoom_level: 2, position: { x: 400, y: 300 } });
    expect(await log<number>('visualViewport.scale')).toBeCloseTo(2, 1);
    const back = await prim('reset-zoom');
    expect(back.body).toMatchObject({ success: true, zoom_level: 1 });
    expect(await log<number>('visualViewport.scale')).toBeCloseTo(1, 2);
    expect((await prim('zoom-page', { x: 400, y: 300, zoom_level: 50 })).status).toBe(400);
    expect((await prim('zoom-page', { zoom_level: 2 })).status).toBe(400);
  });
});

describe('leases and locks apply to primitives', () => {
  test('a leased page refuses primitives without its token', async () => {
    const lease = await ctx.w.call<Body>('POST', '/api/v1/ops/p/lease', { body: { ttl: 30 } });
    const refused = await prim('hover-position', { x: 10, y: 10 });
    expect(refused.status).toBe(423);
    const ok = await ctx.w.call<Body>('POST', '/api/v1/primitive/p/hover-position', {
      body: { x: 10, y: 10 },
      lease: lease.body.lease_token,
    });
    expect(ok.body.success).toBe(true);
    await ctx.w.call('DELETE', '/api/v1/ops/p/lease', { lease: lease.body.lease_token });
  });
});
