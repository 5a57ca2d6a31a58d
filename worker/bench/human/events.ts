/** What the recording page logs into `window.__events`, and how the bench reads it back. */

export interface Rect {
  x: number;
  y: number;
  width: number;
  height: number;
}

export type InputType =
  | 'mousemove'
  | 'pointermove'
  | 'mousedown'
  | 'mouseup'
  | 'click'
  | 'keydown'
  | 'keyup'
  | 'wheel'
  | 'scroll';

/** One DOM event as the page saw it. `t` is performance.now() in the handler. */
export interface InputEvent {
  type: InputType;
  t: number;
  /** The event's own timeStamp (when the input reached the browser, not the handler). */
  ts: number;
  x: number;
  y: number;
  trusted: boolean;
  /** id (or tag name) of the event target and its rect at that moment. */
  target: string;
  rect: Rect | null;
  key?: string;
  deltaY?: number;
  deltaMode?: number;
  /** pointermove only: [timeStamp, x, y] of each raw sample merged into it (coalesced events). */
  raw?: [number, number, number][];
  scrollY: number;
}

/** Placed by the bench (not an input): a new trial begins; `rect` is where the target is. */
export interface Mark {
  type: 'mark';
  t: number;
  label: string;
  rect: Rect | null;
  /** Nominal distance and width of a movement trial. */
  d?: number;
  w?: number;
  scrollY: number;
  visible: boolean;
}

export type Recorded = InputEvent | Mark;

export const isMark = (e: Recorded): e is Mark => e.type === 'mark';

/** A trial (or phase): its mark and the input events up to the next mark. */
export interface Segment {
  mark: Mark;
  events: InputEvent[];
}

export function segments(log: readonly Recorded[]): Segment[] {
  const out: Segment[] = [];
  for (const e of log) {
    if (isMark(e)) out.push({ mark: e, events: [] });
    else out[out.length - 1]?.events.push(e);
  }
  return out;
}

/** Functions the recording page defines on `window`. */
export interface RecorderWindow {
  __events: Recorded[];
  __mark(label: string, extra?: { d?: number; w?: number }): void;
  /** Moves the single target button and marks the start of a trial. */
  __place(x: number, y: number, size: number, label: string, d: number): void;
}
