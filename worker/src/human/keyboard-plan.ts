/**
 * Typing and pasting as pure functions of (text, random source) → timed key steps.
 *
 * Typing goes code point by code point (Array.from), so emoji and other astral characters are
 * never split into lone surrogates. Every so often a letter or digit comes out as its QWERTY
 * neighbour; mostly the typist sees it at once, pauses and deletes it; now and then one or two
 * more characters go by first, and all of them are deleted and retyped. Whatever the draws,
 * replaying the steps yields exactly the input text (see `applyTyping`).
 *
 * Slips come at a steady pace, as a typist's do: the distance from one to the next is drawn
 * around `charsPerTypo` with a narrow spread (not memoryless), so a call of a few hundred
 * characters has about as many corrections as the next one: 2–6 backspaces per 100 characters.
 */
import type { KeyStep, PastePlan, Rng, TypingPlan } from './types';
import { chance, logNormalFromMeanSd, normal, pick, uniform, within } from './random';
import { at } from '../util';

/** Characters from one corrected typo to the next, on average (design: one per 15–30). */
export const DEFAULT_CHARS_PER_TYPO = 28;
/** The spread of that distance, relative to its mean. */
const TYPO_GAP_SPREAD = 0.22;
/** How many characters go by before a typo is noticed: mostly none. */
const NOTICE_AFTER: ReadonlyArray<readonly [number, number]> = [
  [0, 0.8],
  [1, 0.15],
  [2, 0.05],
];

/** US QWERTY rows with each row's horizontal stagger, in key widths. */
const ROWS: ReadonlyArray<readonly [string, number]> = [
  ['1234567890', 0],
  ['qwertyuiop', 0.5],
  ['asdfghjkl', 0.75],
  ['zxcvbnm', 1.25],
];

/**
 * Neighbours are the keys a finger slips onto: left and right in the row, and the keys in
 * the rows above and below whose centres are less than one key width away sideways.
 */
const NEIGHBOURS: ReadonlyMap<string, readonly string[]> = (() => {
  const keys: Array<{ key: string; row: number; x: number }> = [];
  ROWS.forEach(([row, offset], r) => {
    Array.from(row).forEach((key, i) => keys.push({ key, row: r, x: i + offset }));
  });
  const map = new Map<string, string[]>();
  for (const a of keys) {
    const near = keys.filter((b) => {
      const dx = Math.abs(a.x - b.x);
      if (a.row === b.row) return dx === 1;
      return Math.abs(a.row - b.row) === 1 && dx < 1;
    });
    map.set(
      a.key,
      near.map((b) => b.key),
    );
  }
  return map;
})();

/** QWERTY neighbours of a letter or digit, in the same case; empty for anything else. */
export function qwertyNeighbours(char: string): readonly string[] {
  const lower = char.toLowerCase();
  const near = NEIGHBOURS.get(lower) ?? [];
  return char !== lower ? near.map((k) => k.toUpperCase()) : near;
}

/** Pause before an ordinary key: log-normal, mean 230 ms, SD 110 ms (design: 180–300, 80–150). */
export function keyIntervalMs(rng: Rng): number {
  return Math.round(within(() => logNormalFromMeanSd(rng, 230, 110), 35, 1500));
}

/** The pause in which the typist sees the mistake, before the first backspace. */
function noticeMs(rng: Rng): number {
  return Math.round(within(() => logNormalFromMeanSd(rng, 450, 170), 180, 1400));
}

/** Backspaces in a row are quicker than typing: one practised key. */
function backspaceIntervalMs(rng: Rng): number {
  return Math.round(within(() => logNormalFromMeanSd(rng, 110, 35), 50, 300));
}

/**
 * Characters typed after a mistake before it is noticed: 0–2, and only plain printable ASCII,
 * because Backspace in a browser removes a whole grapheme cluster (an emoji with its modifier,
 * a letter with its combining accent), which would not undo exactly one typed code point.
 */
function charsBeforeNoticing(chars: readonly string[], at: number, rng: Rng): number {
  let draw = rng.next();
  let wanted = 0;
  for (const [n, p] of NOTICE_AFTER) {
    wanted = n;
    if (draw < p) break;
    draw -= p;
  }
  let n = 0;
  while (n < wanted && /^[\x20-\x7e]$/.test(chars[at + 1 + n] ?? '')) n++;
  return n;
}

/** Characters until the next slip: around `mean`, within half to 1.6 times it. */
function typoGap(rng: Rng, mean: number): number {
  if (!Number.isFinite(mean)) return Infinity;
  const gap = within(() => normal(rng, mean, mean * TYPO_GAP_SPREAD), mean * 0.5, mean * 1.6);
  return Math.max(1, Math.round(gap));
}

export interface TypingOptions {
  /** Mean characters between corrected typos (≥ 1); Infinity types without a slip. */
  charsPerTypo?: number;
}

export function planTyping(text: string, rng: Rng, opts: TypingOptions = {}): TypingPlan {
  const charsPerTypo = opts.charsPerTypo ?? DEFAULT_CHARS_PER_TYPO;
  if (!(charsPerTypo >= 1)) throw new RangeError('charsPerTypo must be at least 1');
  const chars = Array.from(text);
  const steps: KeyStep[] = [];
  const type = (char: string, typo: boolean, delayMs = keyIntervalMs(rng)): void => {
    steps.push({ kind: 'char', char, delayMs, typo });
  };
  let typos = 0;
  // The call starts somewhere between two slips, not right after one.
  let untilSlip = Math.max(1, Math.round(typoGap(rng, charsPerTypo) * uniform(rng, 0.2, 1)));
  for (let i = 0; i < chars.length;) {
    const char = at(chars, i);
    const near = qwertyNeighbours(char);
    untilSlip -= 1;
    // A slip falls due on the next character that has neighbours to slip onto.
    if (untilSlip > 0 || near.length === 0) {
      type(char, false);
      i += 1;
      continue;
    }
    untilSlip = typoGap(rng, charsPerTypo);
    // The slip, the characters typed before noticing, then the repair.
    const extra = charsBeforeNoticing(chars, i, rng);
    const run = chars.slice(i, i + 1 + extra);
    type(pick(rng, near), true);
    for (const c of run.slice(1)) type(c, false);
    for (let k = 0; k < run.length; k++) {
      steps.push({
        kind: 'backspace',
        delayMs: k === 0 ? noticeMs(rng) : backspaceIntervalMs(rng),
      });
    }
    for (const c of run) type(c, false);
    typos += 1;
    i += run.length;
    untilSlip -= run.length - 1;
  }
  return { steps, keysSent: steps.length, typos };
}

/** The text a field holds after the steps, backspace removing the last code point typed. */
export function applyTyping(steps: readonly KeyStep[]): string {
  const out: string[] = [];
  for (const step of steps) {
    if (step.kind === 'char') out.push(...Array.from(step.char));
    else out.pop();
  }
  return out.join('');
}

/** Paste: a human pause first; one time in ten a fumble (paste, notice, undo, paste again). */
export function planPaste(rng: Rng): PastePlan {
  const delayBeforeMs = Math.round(within(() => logNormalFromMeanSd(rng, 600, 220), 300, 1200));
  const fumbled = chance(rng, 0.1);
  return {
    delayBeforeMs,
    fumbled,
    fumbleUndoDelayMs: fumbled
      ? Math.round(within(() => logNormalFromMeanSd(rng, 700, 250), 300, 1500))
      : 0,
    fumbleRetryDelayMs: fumbled
      ? Math.round(within(() => logNormalFromMeanSd(rng, 400, 150), 150, 1000))
      : 0,
  };
}
