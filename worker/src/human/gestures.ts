import { TimeoutError } from 'puppeteer-core';
import type { PageGestures, Point, Visibility } from '@persona-browser/plugin-sdk';
import type { Call } from '../browser/call';
import type { ManagedPage } from '../browser/managed-page';
import { navigationStarts, stopLoading } from '../browser/page-actions';
import { BrowserFailure, Timeout, errorMessage } from '../errors';
import { approachElement, checkViewportPoint, executorFor, round, viewportOf } from './actions';
import type { InputExecutor } from './executor';
import type { ElementTarget } from './element-target';
import { measureTarget } from './element-target';
import { planPaste, planTyping } from './keyboard-plan';
import { keyFor, KEYS } from './keys';
import { planMove } from './mouse-plan';
import { pageNumber, pageString } from './page-reads';
import { evalIsolated } from '../browser/page-world';
import { uniform } from './random';
import { planScroll } from './scroll-plan';
import type { ScrollPlan, TypingPlan } from './types';

/** Target width assumed for a bare position: a small control. */
const POSITION_TARGET_PX = 16;
/** After a scroll the pointer rests at a random point with x and y in this range (docs/api.md). */
const REST_MIN = 100;
const REST_MAX = 300;
/** How long a pressed F5 has to start the reload by itself before the browser is asked to. */
const F5_GRACE_MS = 700;

/** In-page (isolated world, with a user gesture): puts the text on the system clipboard. */
function writeClipboardInPage(text: string): Promise<string> {
  return navigator.clipboard.writeText(text).then(
    () => 'ok',
    (e: unknown) => String(e),
  );
}

function scaleInPage(): number {
  return window.visualViewport?.scale ?? 1;
}

/**
 * Human input on a page the caller already holds (a primitive route, a plugin): no lock, no
 * bring-to-front, no slowmo pause; whoever holds the page does those once around the gestures.
 * Every wait is bounded by `call`; a gesture stopped halfway lets go of what it held.
 */
export class Gestures implements PageGestures {
  private readonly x: InputExecutor;

  constructor(
    private readonly mp: ManagedPage,
    private readonly call: Call,
  ) {
    this.x = executorFor(mp, call);
  }

  /** Runs one gesture; if it stops halfway, no key or button is left held down. */
  private async gesture<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (err) {
      await this.x.liftAll();
      throw err;
    }
  }

  click(selector: string): Promise<{ selector: string; position: Point }> {
    return this.clickTarget(selector).then((r) => ({ selector, ...r }));
  }

  hover(selector: string): Promise<{ selector: string; position: Point }> {
    return this.hoverTarget(selector).then((r) => ({ selector, ...r }));
  }

  /** Clicks an element named by selector or by a snapshot's reference. */
  clickTarget(target: ElementTarget): Promise<{ position: Point }> {
    return this.gesture(async () => {
      const at = await approachElement(this.x, this.mp, this.call, target);
      await this.x.click();
      return { position: round(at) };
    });
  }

  hoverTarget(target: ElementTarget): Promise<{ position: Point }> {
    return this.gesture(async () => {
      const at = await approachElement(this.x, this.mp, this.call, target);
      return { position: round(at) };
    });
  }

  private async moveToPosition(p: Point): Promise<void> {
    const viewport = await viewportOf(this.mp, this.call);
    checkViewportPoint(this.mp, p, viewport);
    await this.x.moveTo(p, POSITION_TARGET_PX, viewport);
  }

  clickAt(at: Point): Promise<{ position: Point }> {
    return this.gesture(async () => {
      await this.moveToPosition(at);
      await this.x.click();
      return { position: round(at) };
    });
  }

  hoverAt(at: Point): Promise<{ position: Point }> {
    return this.gesture(async () => {
      await this.moveToPosition(at);
      return { position: round(at) };
    });
  }

  checkVisible(target: ElementTarget): Promise<Visibility> {
    return measureTarget(this.mp, this.call, target);
  }

  /** Plans a scroll; a caller that bounds its time checks `scrollPlanMs` before playing it. */
  planScroll(distance: number): ScrollPlan {
    return planScroll(distance, this.x.rng);
  }

  scroll(
    distance: number,
    plan = this.planScroll(distance),
  ): Promise<{ scrolled_distance: number }> {
    return this.gesture(async () => {
      const gross = await this.x.wheel(plan.main);
      // A short scroll has no back-scroll: nothing to recover, the hand stays where it is.
      if (plan.back.length === 0) return { scrolled_distance: Math.round(gross) };
      await this.call.sleep(plan.pauseMs);
      const rng = this.x.rng;
      const rest = { x: uniform(rng, REST_MIN, REST_MAX), y: uniform(rng, REST_MIN, REST_MAX) };
      await this.x.play(planMove(this.mp.pointer, rest, POSITION_TARGET_PX, rng));
      await this.x.wheel(plan.back);
      return { scrolled_distance: Math.round(gross) };
    });
  }

  /** Plans typing; a caller that bounds its time checks `typingPlanMs` before playing it. */
  planTyping(text: string): TypingPlan {
    return planTyping(text, this.x.rng);
  }

  type(
    text: string,
    plan = this.planTyping(text),
  ): Promise<{ text_length: number; chars_typed: number; typos_made: number }> {
    return this.gesture(async () => {
      // A step's delay runs from the previous key going down, not from its release: the hold
      // is part of the interval, as on a real keyboard.
      let lastDown = performance.now();
      for (const step of plan.steps) {
        await this.call.sleep(lastDown + step.delayMs - performance.now());
        lastDown = performance.now();
        await this.x.tap(step.kind === 'char' ? keyFor(step.char) : KEYS.Backspace);
      }
      return {
        text_length: Array.from(text).length,
        chars_typed: plan.keysSent,
        typos_made: plan.typos,
      };
    });
  }

  paste(text: string): Promise<{ text_length: number; fumbled: boolean; delay_before_ms: number }> {
    return this.gesture(async () => {
      const plan = planPaste(this.x.rng);
      const written = pageString(
        await evalIsolated<unknown>(this.mp, this.call, writeClipboardInPage, [text], {
          userGesture: true,
        }),
        'the clipboard write',
      );
      if (written !== 'ok') {
        throw new BrowserFailure(
          `The clipboard refused the text on this page: ${written}`,
          this.mp.id,
        );
      }
      await this.call.sleep(plan.delayBeforeMs);
      await this.x.shortcut(KEYS.V, 'paste');
      if (plan.fumbled) {
        await this.call.sleep(plan.fumbleUndoDelayMs);
        await this.x.shortcut(KEYS.Z, 'undo');
        await this.call.sleep(plan.fumbleRetryDelayMs);
        await this.x.shortcut(KEYS.V, 'paste');
      }
      return {
        text_length: Array.from(text).length,
        fumbled: plan.fumbled,
        delay_before_ms: Math.round(plan.delayBeforeMs),
      };
    });
  }

  selectAll(): Promise<{ key: string }> {
    return this.gesture(async () => {
      await this.x.shortcut(KEYS.A, 'selectAll');
      return { key: 'Ctrl+A' };
    });
  }

  pressEnter(): Promise<{ key: string }> {
    return this.gesture(async () => {
      await this.x.tap(KEYS.Enter);
      return { key: 'Enter' };
    });
  }

  /** Escape, as a person closes a dialog, a menu or a viewer. */
  pressEscape(): Promise<{ key: string }> {
    return this.gesture(async () => {
      await this.x.tap(KEYS.Escape);
      return { key: 'Escape' };
    });
  }

  pressTab(withShift: boolean): Promise<{ key: string }> {
    return this.gesture(async () => {
      await this.x.tap({ ...KEYS.Tab, shift: withShift });
      return { key: withShift ? 'Shift+Tab' : 'Tab' };
    });
  }

  /**
   * F5 as a person presses it. Whether the browser acts on a key sent through the protocol
   * depends on focus, so the reload is asked of the browser only if the key did not start one:
   * exactly one reload either way.
   */
  reload(): Promise<{ key: string; status_code: number | null }> {
    return this.gesture(async () => {
      const page = this.mp.page;
      const timeout = this.mp.timing.navigationTimeoutMs;
      const options = {
        waitUntil: 'domcontentloaded' as const,
        timeout,
        signal: this.call.signal,
      };
      const byKey = page.waitForNavigation(options);
      byKey.catch(() => undefined);
      const started = navigationStarts(this.mp.page, F5_GRACE_MS);
      try {
        await this.x.tap(KEYS.F5);
        const res = (await this.call.race(started))
          ? await this.call.race(byKey)
          : await this.call.race(page.reload(options));
        return { key: 'F5', status_code: res?.status() ?? null };
      } catch (err) {
        if (err instanceof TimeoutError) {
          await stopLoading(this.mp);
          throw new Timeout(`Reload exceeded ${timeout / 1000} s`, this.mp.id);
        }
        if (this.call.signal.aborted) {
          await stopLoading(this.mp);
          throw err;
        }
        throw new BrowserFailure(`Reload failed: ${errorMessage(err)}`, this.mp.id);
      }
    });
  }

  /** The page's pinch-zoom scale (1 = 100 %). */
  private async scale(): Promise<number> {
    return pageNumber(await evalIsolated<unknown>(this.mp, this.call, scaleInPage, []), 'scale');
  }

  /** A pinch gesture centred on (x, y) to `zoomLevel` (1 = 100 %). */
  private async pinchTo(at: Point, zoomLevel: number): Promise<void> {
    const current = await this.scale();
    if (Math.abs(current - zoomLevel) < 0.001) return;
    await this.mp.cdp(this.call, (s) =>
      s.send('Input.synthesizePinchGesture', {
        x: at.x,
        y: at.y,
        scaleFactor: zoomLevel / current,
        relativeSpeed: 600,
        gestureSourceType: 'mouse',
      }),
    );
  }

  zoom(at: Point, level: number): Promise<{ zoom_level: number; position: Point }> {
    return this.gesture(async () => {
      checkViewportPoint(this.mp, at, await viewportOf(this.mp, this.call));
      await this.pinchTo(at, level);
      return { zoom_level: level, position: round(at) };
    });
  }

  resetZoom(): Promise<{ zoom_level: number }> {
    return this.gesture(async () => {
      const vp = await viewportOf(this.mp, this.call);
      const scale = await this.scale();
      // The gesture's point is taken in zoomed pixels: the middle of the screen over the scale
      // stays on screen whatever the current zoom.
      await this.pinchTo({ x: vp.width / 2 / scale, y: vp.height / 2 / scale }, 1);
      return { zoom_level: 1 };
    });
  }
}
