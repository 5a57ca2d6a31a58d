import { TimeoutError } from 'puppeteer-core';
import type { HTTPRequest } from 'puppeteer-core';
import type { ManagedPage } from '../browser/managed-page';
import { NAVIGATION_TIMEOUT_MS } from '../browser/page-actions';
import { BrowserFailure, Timeout, errorMessage } from '../errors';
import { sleep } from '../util';
import { approachElement, checkViewportPoint, executorFor, round, viewportOf } from './actions';
import { measure } from './geometry';
import type { Geometry } from './geometry';
import { planPaste, planTyping } from './keyboard-plan';
import { keyFor, KEYS } from './keys';
import { evalIsolated } from './page-world';
import { planScroll } from './scroll-plan';
import { uniform } from './random';
import { planMove } from './mouse-plan';
import type { Point } from './types';

/** Target width assumed for a bare position: a small control. */
const POSITION_TARGET_PX = 16;
/** After a scroll the pointer rests at a random point with x and y in this range (SPEC rule 6). */
const REST_MIN = 100;
const REST_MAX = 300;

type Result = Record<string, unknown>;

/** Every primitive: the page's lock, in front like a real hand needs, then the slowmo pause. */
function act(
  mp: ManagedPage,
  name: string,
  slowmoMs: number,
  work: () => Promise<Result>,
  loading = false,
): Promise<Result> {
  return mp.run(
    name,
    async () => {
      await mp.page.bringToFront();
      const out = await work();
      await sleep(slowmoMs);
      return { url: mp.page.url(), ...out };
    },
    { loading, allowCrashed: loading },
  );
}

export function clickElement(mp: ManagedPage, selector: string, slowmo: number): Promise<Result> {
  return act(mp, 'click-element', slowmo, async () => {
    const { x, at } = await approachElement(mp, selector);
    await x.click();
    return { selector, position: round(at) };
  });
}

export function hoverElement(mp: ManagedPage, selector: string, slowmo: number): Promise<Result> {
  return act(mp, 'hover-element', slowmo, async () => {
    const { at } = await approachElement(mp, selector);
    return { selector, position: round(at) };
  });
}

async function moveToPosition(mp: ManagedPage, p: Point): Promise<ReturnType<typeof executorFor>> {
  const viewport = await viewportOf(mp);
  checkViewportPoint(mp, p, viewport);
  const x = executorFor(mp);
  await x.moveTo(p, POSITION_TARGET_PX, viewport);
  return x;
}

export function clickPosition(mp: ManagedPage, p: Point, slowmo: number): Promise<Result> {
  return act(mp, 'click-position', slowmo, async () => {
    const x = await moveToPosition(mp, p);
    await x.click();
    return { position: round(p) };
  });
}

export function hoverPosition(mp: ManagedPage, p: Point, slowmo: number): Promise<Result> {
  return act(mp, 'hover-position', slowmo, async () => {
    await moveToPosition(mp, p);
    return { position: round(p) };
  });
}

/** A reading call: no lock wait beyond the usual, no foregrounding, no slowmo. */
export function checkVisible(mp: ManagedPage, selector: string): Promise<Result> {
  return mp.run('check-visible', async () => {
    const g: Geometry = await measure(mp, selector);
    return { url: mp.page.url(), selector, ...g };
  });
}

export function scrollPage(mp: ManagedPage, distance: number, slowmo: number): Promise<Result> {
  return act(mp, 'scroll-page', slowmo, async () => {
    const x = executorFor(mp);
    const plan = planScroll(distance, x.rng);
    const gross = await x.wheel(plan.main);
    await sleep(plan.pauseMs);
    const rest = { x: uniform(x.rng, REST_MIN, REST_MAX), y: uniform(x.rng, REST_MIN, REST_MAX) };
    await x.play(planMove(mp.pointer, rest, POSITION_TARGET_PX, x.rng));
    await x.wheel(plan.back);
    return { scrolled_distance: Math.round(gross) };
  });
}

export function typeText(mp: ManagedPage, text: string, slowmo: number): Promise<Result> {
  return act(mp, 'type-text', slowmo, async () => {
    const x = executorFor(mp);
    const plan = planTyping(text, x.rng);
    // A step's delay runs from the previous key going down, not from its release: the hold
    // is part of the interval, as on a real keyboard.
    let lastDown = performance.now();
    for (const step of plan.steps) {
      await sleep(lastDown + step.delayMs - performance.now());
      lastDown = performance.now();
      await x.tap(step.kind === 'char' ? keyFor(step.char) : KEYS.Backspace);
    }
    return {
      text_length: Array.from(text).length,
      chars_typed: plan.keysSent,
      typos_made: plan.typos,
    };
  });
}

/** In-page (isolated world, with a user gesture): puts the text on the system clipboard. */
function writeClipboardInPage(text: string): Promise<string> {
  return navigator.clipboard.writeText(text).then(
    () => 'ok',
    (e: unknown) => String(e),
  );
}

export function pasteText(mp: ManagedPage, text: string, slowmo: number): Promise<Result> {
  return act(mp, 'paste-text', slowmo, async () => {
    const x = executorFor(mp);
    const plan = planPaste(x.rng);
    const written = await evalIsolated<string>(mp, writeClipboardInPage, [text], {
      userGesture: true,
    });
    if (written !== 'ok') {
      throw new BrowserFailure(`The clipboard refused the text on this page: ${written}`, mp.id);
    }
    await sleep(plan.delayBeforeMs);
    await x.shortcut(KEYS.V, 'paste');
    if (plan.fumbled) {
      await sleep(plan.fumbleUndoDelayMs);
      await x.shortcut(KEYS.Z, 'undo');
      await sleep(plan.fumbleRetryDelayMs);
      await x.shortcut(KEYS.V, 'paste');
    }
    return {
      text_length: Array.from(text).length,
      fumbled: plan.fumbled,
      delay_before_ms: Math.round(plan.delayBeforeMs),
    };
  });
}

export function pressEnter(mp: ManagedPage, slowmo: number): Promise<Result> {
  return act(mp, 'press-enter', slowmo, async () => {
    await executorFor(mp).tap(KEYS.Enter);
    return { key: 'Enter' };
  });
}

export function pressTab(mp: ManagedPage, withShift: boolean, slowmo: number): Promise<Result> {
  return act(mp, 'press-tab', slowmo, async () => {
    await executorFor(mp).tap({ ...KEYS.Tab, shift: withShift });
    return { key: withShift ? 'Shift+Tab' : 'Tab' };
  });
}

/** How long a pressed F5 has to start the reload by itself before the browser is asked to. */
const F5_GRACE_MS = 700;

/** Resolves true if the main frame starts a navigation within `ms`. */
function navigationStarts(mp: ManagedPage, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const onRequest = (req: HTTPRequest): void => {
      if (req.isNavigationRequest() && req.frame() === mp.page.mainFrame()) finish(true);
    };
    const finish = (started: boolean): void => {
      clearTimeout(timer);
      mp.page.off('request', onRequest);
      resolve(started);
    };
    const timer = setTimeout(() => finish(false), ms);
    mp.page.on('request', onRequest);
  });
}

/**
 * F5 as a person presses it. Whether the browser acts on a key sent through the protocol
 * depends on focus, so the reload is asked of the browser only if the key did not start one:
 * exactly one reload either way.
 */
export function reloadPage(mp: ManagedPage, slowmo: number): Promise<Result> {
  return act(
    mp,
    'reload-page',
    slowmo,
    async () => {
      const options = { waitUntil: 'domcontentloaded' as const, timeout: NAVIGATION_TIMEOUT_MS };
      const byKey = mp.page.waitForNavigation(options);
      const started = navigationStarts(mp, F5_GRACE_MS);
      try {
        await executorFor(mp).tap(KEYS.F5);
        const res = (await started) ? await byKey : await mp.page.reload(options);
        return { key: 'F5', status_code: res?.status() ?? null };
      } catch (err) {
        if (err instanceof TimeoutError) {
          await mp.cdp.send('Page.stopLoading').catch(() => undefined);
          throw new Timeout(`Reload exceeded ${NAVIGATION_TIMEOUT_MS / 1000} s`, mp.id);
        }
        throw new BrowserFailure(`Reload failed: ${errorMessage(err)}`, mp.id);
      } finally {
        byKey.catch(() => undefined);
      }
    },
    true,
  );
}

function scaleInPage(): number {
  return window.visualViewport?.scale ?? 1;
}

/** A pinch gesture centred on (x, y) to `zoomLevel` (1 = 100 %). */
async function pinchTo(mp: ManagedPage, at: Point, zoomLevel: number): Promise<void> {
  const current = await evalIsolated<number>(mp, scaleInPage, []);
  if (Math.abs(current - zoomLevel) < 0.001) return;
  await mp.cdp.send('Input.synthesizePinchGesture', {
    x: at.x,
    y: at.y,
    scaleFactor: zoomLevel / current,
    relativeSpeed: 600,
    gestureSourceType: 'mouse',
  });
}

export function zoomPage(
  mp: ManagedPage,
  at: Point,
  zoomLevel: number,
  slowmo: number,
): Promise<Result> {
  return act(mp, 'zoom-page', slowmo, async () => {
    checkViewportPoint(mp, at, await viewportOf(mp));
    await pinchTo(mp, at, zoomLevel);
    return { zoom_level: zoomLevel, position: round(at) };
  });
}

export function resetZoom(mp: ManagedPage, slowmo: number): Promise<Result> {
  return act(mp, 'reset-zoom', slowmo, async () => {
    const vp = await viewportOf(mp);
    const scale = await evalIsolated<number>(mp, scaleInPage, []);
    // The gesture's point is taken in zoomed pixels: the middle of the screen over the scale
    // stays on screen whatever the current zoom.
    await pinchTo(mp, { x: vp.width / 2 / scale, y: vp.height / 2 / scale }, 1);
    return { zoom_level: 1 };
  });
}
