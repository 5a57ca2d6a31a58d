import type { ManagedPage } from '../browser/managed-page';
import { sleep } from '../util';
import type { KeyDef } from './keys';
import { KEYS } from './keys';
import { planMove, pressDurationMs, settleBeforePressMs } from './mouse-plan';
import { uniform } from './random';
import type { MovePlan, Point, Rng, WheelNotch } from './types';

type Viewport = { width: number; height: number };

const SHIFT = 8;
const CTRL = 2;

/** Waits until `t` ms after `start` (performance.now() time base). */
async function until(start: number, t: number): Promise<void> {
  const wait = start + t - performance.now();
  if (wait > 0.5) await sleep(wait);
}

/**
 * The thin half of human input: sends planned steps through CDP `Input.*` at their times and
 * keeps the page's pointer position. It decides nothing a planner could decide.
 */
export class InputExecutor {
  constructor(
    private readonly mp: ManagedPage,
    readonly rng: Rng,
  ) {}

  get pointer(): Point {
    return this.mp.pointer;
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
        await until(start, step.t);
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
      await Promise.all(sent);
    }
  }

  moveTo(target: Point, targetWidth: number, bounds?: Viewport): Promise<void> {
    return this.play(planMove(this.mp.pointer, target, targetWidth, this.rng), bounds);
  }

  /** A short settle on the target, then a press of human length. */
  async click(): Promise<void> {
    await sleep(settleBeforePressMs(this.rng));
    const at = this.mp.pointer;
    await this.mouse('mousePressed', at, 1);
    await sleep(pressDurationMs(this.rng));
    await this.mouse('mouseReleased', at, 0);
  }

  /** Wheel notches at their planned pauses, sent without waiting on frames (see `play`). */
  async wheel(notches: WheelNotch[]): Promise<number> {
    let total = 0;
    const sent: Array<Promise<unknown>> = [];
    try {
      for (const notch of notches) {
        await sleep(notch.delayMs);
        const { x, y } = this.mp.pointer;
        sent.push(
          this.mp.cdp.send('Input.dispatchMouseEvent', {
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
    } finally {
      await Promise.all(sent);
    }
    return total;
  }

  /** Presses and releases one key, holding it a human moment; Shift first when it needs it. */
  async tap(def: KeyDef, opts: { modifiers?: number; commands?: string[] } = {}): Promise<void> {
    let modifiers = opts.modifiers ?? 0;
    if (def.shift) {
      await this.key('rawKeyDown', KEYS.Shift, SHIFT);
      modifiers |= SHIFT;
      await sleep(uniform(this.rng, 30, 70));
    }
    await this.key('keyDown', def, modifiers, opts.commands);
    await sleep(uniform(this.rng, 40, 100));
    await this.key('keyUp', def, modifiers);
    if (def.shift) {
      await sleep(uniform(this.rng, 10, 40));
      await this.key('keyUp', KEYS.Shift, 0);
    }
  }

  /** Ctrl held around one key, which runs an editing command (paste, undo) as the browser does. */
  async shortcut(def: KeyDef, command: string): Promise<void> {
    await this.key('rawKeyDown', KEYS.Control, CTRL);
    await sleep(uniform(this.rng, 40, 110));
    await this.tap(def, { modifiers: CTRL, commands: [command] });
    await sleep(uniform(this.rng, 20, 60));
    await this.key('keyUp', KEYS.Control, 0);
  }

  private async key(
    type: 'keyDown' | 'rawKeyDown' | 'keyUp',
    def: KeyDef,
    modifiers: number,
    commands?: string[],
  ): Promise<void> {
    // A keyDown with text types it; rawKeyDown is a key with no character (Shift, Ctrl).
    const text =
      type === 'keyDown' && def.text !== undefined && !(modifiers & CTRL) ? def.text : undefined;
    await this.mp.cdp.send('Input.dispatchKeyEvent', {
      type: type === 'keyDown' && text === undefined ? 'rawKeyDown' : type,
      key: def.key,
      code: def.code,
      windowsVirtualKeyCode: def.keyCode,
      nativeVirtualKeyCode: def.keyCode,
      modifiers,
      ...(text !== undefined ? { text, unmodifiedText: text } : {}),
      ...(commands ? { commands } : {}),
    });
  }

  private async mouse(
    type: 'mouseMoved' | 'mousePressed' | 'mouseReleased',
    at: Point,
    buttons: number,
  ): Promise<void> {
    await this.mp.cdp.send('Input.dispatchMouseEvent', {
      type,
      x: at.x,
      y: at.y,
      button: type === 'mouseMoved' ? 'none' : 'left',
      buttons,
      clickCount: type === 'mouseMoved' ? 0 : 1,
      pointerType: 'mouse',
    });
  }
}
