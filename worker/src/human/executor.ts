import type { Call } from '../browser/call';
import type { ManagedPage } from '../browser/managed-page';
import type { KeyDef } from './keys';
import { KEYS } from './keys';
import { planMove, pressDurationMs, settleBeforePressMs } from './mouse-plan';
import { uniform } from './random';
import type { MovePlan, Point, Rng, WheelNotch } from './types';

type Viewport = { width: number; height: number };

const SHIFT = 8;
const CTRL = 2;
/** How long lifting a held key or button may take when a call is stopped mid-gesture. */
const LIFT_TIMEOUT_MS = 1_000;

/**
 * The thin half of human input: sends planned steps through CDP `Input.*` at their times and
 * keeps the page's pointer position. It decides nothing a planner could decide. Every wait is
 * bounded by the call; if the call stops mid-gesture, `liftAll` lets go of whatever key or
 * button is still down, so the page is not left with Shift held or the mouse pressed.
 */
export class InputExecutor {
  private readonly heldKeys = new Map<string, KeyDef>();
  private buttonDown = false;

  constructor(
    private readonly mp: ManagedPage,
    private readonly call: Call,
    readonly rng: Rng,
  ) {}

  get pointer(): Point {
    return this.mp.pointer;
  }

  /** Waits until `t` ms after `start` (performance.now() time base). */
  private async until(start: number, t: number): Promise<void> {
    const wait = start + t - performance.now();
    if (wait > 0.5) await this.call.sleep(wait);
    else this.call.throwIfAborted();
  }

  /**
   * Plays a movement plan. Events are sent at their planned times without waiting for each to
   * be acknowledged: the browser acknowledges a move only at its next frame, and waiting would
   * stretch every movement by a third (npm run bench:human). An arc may swing past the screen's
   * edge near it; a real pointer stops at the edge, so steps are held inside `bounds` when given.
   */
  async play(plan: MovePlan, bounds?: Viewport): Promise<void> {
    const start = performance.now();
    const sent: Array<Promise<void>> = [];
    try {
      for (const step of plan.steps) {
        await this.until(start, step.t);
        const at = bounds
          ? {
              x: Math.min(Math.max(step.x, 0), bounds.width - 1),
              y: Math.min(Math.max(step.y, 0), bounds.height - 1),
            }
          : step;
        sent.push(this.mouse('mouseMoved', at, 0));
        this.mp.pointer = { x: at.x, y: at.y };
      }
    } finally {
      await this.call.race(Promise.all(sent)).catch((err: unknown) => {
        if (!this.call.signal.aborted) throw err;
      });
    }
    this.call.throwIfAborted();
  }

  moveTo(target: Point, targetWidth: number, bounds?: Viewport): Promise<void> {
    return this.play(planMove(this.mp.pointer, target, targetWidth, this.rng), bounds);
  }

  /**
   * A short settle on the target, then a press of human length. The hold counts from the press,
   * and the two events carry their own times: a page slow to take the press (its answer waits
   * for the page) or a busy machine delaying the release adds nothing to the press the page
   * sees (a CI run saw 245 ms for a planned 150 at most).
   */
  async click(): Promise<void> {
    await this.call.sleep(settleBeforePressMs(this.rng));
    const at = this.mp.pointer;
    const hold = pressDurationMs(this.rng);
    const pressedAt = Date.now();
    const started = performance.now();
    this.buttonDown = true;
    await this.mouse('mousePressed', at, 1, pressedAt);
    await this.call.sleep(Math.max(0, hold - (performance.now() - started)));
    await this.mouse('mouseReleased', at, 0, pressedAt + hold);
    this.buttonDown = false;
  }

  /**
   * Wheel notches at their planned pauses, each sent only once the page has taken the one
   * before. Unlike moves, wheel events must not queue up: Chromium merges wheel events that
   * wait for the page's main thread into one, so two notches sent while the page was busy
   * (its first wheel ever takes about half a second) reach it as a single 200 px "notch"
   * (npm run bench:human). The browser acknowledges a wheel event once the page has handled
   * it, so waiting for that keeps every notch a notch of its own. A notch's pause counts from
   * when the one before was sent; a slow page only stretches the pauses it overruns.
   * Returns the total sent.
   */
  async wheel(notches: WheelNotch[]): Promise<number> {
    let total = 0;
    let lastSent = performance.now();
    for (const notch of notches) {
      await this.until(lastSent, notch.delayMs);
      const { x, y } = this.mp.pointer;
      lastSent = performance.now();
      await this.mp.cdp(this.call, (s) =>
        s.send('Input.dispatchMouseEvent', {
          type: 'mouseWheel',
          x,
          y,
          deltaX: 0,
          deltaY: notch.deltaY,
          pointerType: 'mouse',
        }),
      );
      total += notch.deltaY;
    }
    return total;
  }

  /** Presses and releases one key, holding it a human moment; Shift first when it needs it. */
  async tap(def: KeyDef, opts: { modifiers?: number; commands?: string[] } = {}): Promise<void> {
    let modifiers = opts.modifiers ?? 0;
    if (def.shift) {
      await this.key('rawKeyDown', KEYS.Shift, SHIFT);
      modifiers |= SHIFT;
      await this.call.sleep(uniform(this.rng, 30, 70));
    }
    await this.key('keyDown', def, modifiers, opts.commands);
    await this.call.sleep(uniform(this.rng, 40, 100));
    await this.key('keyUp', def, modifiers);
    if (def.shift) {
      await this.call.sleep(uniform(this.rng, 10, 40));
      await this.key('keyUp', KEYS.Shift, 0);
    }
  }

  /** Ctrl held around one key, which runs an editing command (paste, undo) as the browser does. */
  async shortcut(def: KeyDef, command: string): Promise<void> {
    await this.key('rawKeyDown', KEYS.Control, CTRL);
    await this.call.sleep(uniform(this.rng, 40, 110));
    await this.tap(def, { modifiers: CTRL, commands: [command] });
    await this.call.sleep(uniform(this.rng, 20, 60));
    await this.key('keyUp', KEYS.Control, 0);
  }

  /**
   * Lets go of every key and button still held (a call stopped mid-gesture). Sent on the
   * session directly, not through the stopped call, each bounded by LIFT_TIMEOUT_MS.
   */
  async liftAll(): Promise<void> {
    const lifts: Array<Promise<unknown>> = [];
    for (const def of this.heldKeys.values()) {
      lifts.push(this.mp.session.send('Input.dispatchKeyEvent', this.keyEvent('keyUp', def, 0)));
    }
    this.heldKeys.clear();
    if (this.buttonDown) {
      this.buttonDown = false;
      const { x, y } = this.mp.pointer;
      lifts.push(
        this.mp.session.send('Input.dispatchMouseEvent', {
          type: 'mouseReleased',
          x,
          y,
          button: 'left',
          buttons: 0,
          clickCount: 1,
          pointerType: 'mouse',
        }),
      );
    }
    const timeout = new Promise((resolve) => setTimeout(resolve, LIFT_TIMEOUT_MS).unref());
    await Promise.race([Promise.allSettled(lifts), timeout]);
  }

  private keyEvent(
    type: 'keyDown' | 'rawKeyDown' | 'keyUp',
    def: KeyDef,
    modifiers: number,
    commands?: string[],
  ) {
    // A keyDown with text types it; rawKeyDown is a key with no character (Shift, Ctrl).
    const text =
      type === 'keyDown' && def.text !== undefined && !(modifiers & CTRL) ? def.text : undefined;
    return {
      type: type === 'keyDown' && text === undefined ? ('rawKeyDown' as const) : type,
      key: def.key,
      code: def.code,
      windowsVirtualKeyCode: def.keyCode,
      nativeVirtualKeyCode: def.keyCode,
      modifiers,
      ...(text !== undefined ? { text, unmodifiedText: text } : {}),
      ...(commands ? { commands } : {}),
    };
  }

  private async key(
    type: 'keyDown' | 'rawKeyDown' | 'keyUp',
    def: KeyDef,
    modifiers: number,
    commands?: string[],
  ): Promise<void> {
    if (type === 'keyUp') this.heldKeys.delete(def.code || def.key);
    else this.heldKeys.set(def.code || def.key, def);
    const event = this.keyEvent(type, def, modifiers, commands);
    await this.mp.cdp(this.call, (s) => s.send('Input.dispatchKeyEvent', event));
  }

  /** A mouse event; `atMs` (ms since 1970) is its time as the page sees it, else its arrival. */
  private async mouse(
    type: 'mouseMoved' | 'mousePressed' | 'mouseReleased',
    at: Point,
    buttons: number,
    atMs?: number,
  ): Promise<void> {
    await this.mp.cdp(this.call, (s) =>
      s.send('Input.dispatchMouseEvent', {
        type,
        x: at.x,
        y: at.y,
        button: type === 'mouseMoved' ? 'none' : 'left',
        buttons,
        clickCount: type === 'mouseMoved' ? 0 : 1,
        pointerType: 'mouse',
        ...(atMs === undefined ? {} : { timestamp: atMs / 1000 }),
      }),
    );
  }
}
