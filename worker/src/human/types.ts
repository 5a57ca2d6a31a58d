/**
 * The contract between the pure planners (input + random source → timed steps) and the thin
 * executor that sends the steps through CDP `Input.*`. Times are milliseconds; coordinates are
 * CSS pixels of the viewport; points and boxes are the plugin SDK's.
 */
import type { Point } from '@persona-browser/plugin-sdk';

export type { Box, Point } from '@persona-browser/plugin-sdk';

/** A random source in [0, 1). Planners take one so that a seed reproduces a plan exactly. */
export interface Rng {
  next(): number;
}

/** One mouse-move event: where the pointer is `t` ms after the movement started. */
export interface MouseStep extends Point {
  t: number;
}

export interface MovePlan {
  /** Increasing `t`, first step after the start point, last step exactly at the target. */
  steps: MouseStep[];
  durationMs: number;
}

/** One key action of a typing plan; `delayMs` is the pause before it. */
export type KeyStep =
  | { kind: 'char'; char: string; delayMs: number; typo: boolean }
  | { kind: 'backspace'; delayMs: number };

export interface TypingPlan {
  steps: KeyStep[];
  /** Keys sent: every char step and every backspace. */
  keysSent: number;
  /** Typos made (each is corrected). */
  typos: number;
}

/** One wheel notch: `deltaY` px (positive scrolls down), after a pause of `delayMs`. */
export interface WheelNotch {
  deltaY: number;
  delayMs: number;
}

export interface ScrollPlan {
  /**
   * The main burst's total, signed, whole px: the request times 1.1–1.2 as far as whole
   * notches allow (scroll-plan.ts says when they do not).
   */
  gross: number;
  main: WheelNotch[];
  /** Pause between the main burst and the back-scroll (0 when there is none). */
  pauseMs: number;
  /** Opposite direction, 0.1–0.2 of `gross` in total; empty for a short scroll. */
  back: WheelNotch[];
}

export interface PastePlan {
  /** The human pause before reaching for Ctrl+V. */
  delayBeforeMs: number;
  /** A fumble: paste, notice, undo (Ctrl+Z), paste again. */
  fumbled: boolean;
  /** Pause before undoing a fumble, and before the second paste. */
  fumbleUndoDelayMs: number;
  fumbleRetryDelayMs: number;
}
