/**
 * Typing and pasting as pure functions of (text, random source) → timed key steps.
 *
 * Typing goes code point by code point (Array.from), so emoji and other astral characters are
 * never split into lone surrogates. Now and then a letter or digit comes out as its QWERTY
 * neighbour; the typist may type up to two more characters before noticing, pauses, deletes
 * back to the mistake and retypes. Whatever the draws, replaying the steps yields exactly the
 * input text (see `applyTyping`).
 */
import type { KeyStep, PastePlan, Rng, TypingPlan } from './types';
import { chance, logNormalFromMeanSd, pick, within } from './random';

/**
 * Chance that a letter or digit is mistyped. English prose is about 80 % letters and digits,
 * so this gives one typo per ~22 characters, inside the 15–30 the design asks for.
 */
export const DEFAULT_TYPO_RATE = 0.055;

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
  const wanted = pick(rng, [0, 0, 0, 0, 1, 1, 1, 2, 2]);
  let n = 0;
  while (n < wanted && /^[\x20-\x7e]$/.test(chars[at + 1 + n] ?? '')) n++;
  return n;
}

export function planTyping(text: string, rng: Rng, opts: { typoRate?: number } = {}): TypingPlan {
  const typoRate = opts.typoRate ?? DEFAULT_TYPO_RATE;
  if (!(typoRate >= 0 && typoRate <= 1)) throw new RangeError('typoRate must be in [0, 1]');
  const chars = Array.from(text);
  const steps: KeyStep[] = [];
  const type = (char: string, typo: boolean, delayMs = keyIntervalMs(rng)): void => {
    steps.push({ kind: 'char', char, delayMs, typo });
  };
  let typos = 0;
  for (let i = 0; i < chars.length;) {
    const char = chars[i] as string;
    const near = qwertyNeighbours(char);
    if (near.length === 0 || !chance(rng, typoRate)) {
      type(char, false);
      i += 1;
      continue;
    }
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
