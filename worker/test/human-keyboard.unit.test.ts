/**
 * The typing and paste planners against the human-likeness targets (inter-key timing, typo rate)
 * and the one hard rule: replaying a plan gives exactly the text, whatever the characters.
 */
import {
  DEFAULT_CHARS_PER_TYPO,
  applyTyping,
  keyIntervalMs,
  planPaste,
  planTyping,
  qwertyNeighbours,
} from '../src/human/keyboard-plan';
import { seededRng } from '../src/human/random';
import type { KeyStep, Rng } from '../src/human/types';
import { mean, sd } from '@persona-browser/testkit/stats';

const median = (xs: readonly number[]): number => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
};
const isUpper = (c: string): boolean => c !== c.toLowerCase();
const isLower = (c: string): boolean => c !== c.toUpperCase();
const fmt = (x: number): string => x.toFixed(2);

const WORDS = (
  'the quick brown fox jumps over a lazy dog while seven wizards quietly judge boxing ' +
  'matches in 2024 and Paris London Tokyo are cities people visit for 3 days or more'
).split(' ');

/** English-like prose: words, capitals, digits, punctuation, about 80 % letters and digits. */
function prose(rng: Rng, words: number): string {
  const out: string[] = [];
  for (let i = 0; i < words; i++) {
    const word = WORDS[Math.floor(rng.next() * WORDS.length)]!;
    out.push(rng.next() < 0.1 ? word + (rng.next() < 0.5 ? ',' : '.') : word);
  }
  return out.join(' ');
}

/** Pieces that break naive string handling: astral emoji, ZWJ and modifier sequences, flags,
 * combining accents, CJK, right-to-left text, whitespace controls, lone surrogates. */
const PIECES = [
  'a', 'Z', '7', ' ', '\n', '\t', '\r\n', '.', '@', 'é', 'e\u0301', 'ß', 'ñ', 'Ω', '中', '文',
  '字', 'あ', '한', 'ع', 'ש', '😀', '👍🏽', '👩‍💻', '🇫🇷', '𝔸', '\u200d', '\ud800', 'Q', 'x', 'k',
]; // prettier-ignore

function randomUnicode(rng: Rng): string {
  const n = Math.floor(rng.next() * 40);
  let s = '';
  for (let i = 0; i < n; i++) s += PIECES[Math.floor(rng.next() * PIECES.length)]!;
  return s;
}

const charDelays = (steps: readonly KeyStep[]): number[] =>
  steps.flatMap((s) => (s.kind === 'char' && !s.typo ? [s.delayMs] : []));

describe('inter-key timing', () => {
  test('log-normal-like, mean 180–300 ms, SD 80–150 ms', () => {
    const rng = seededRng(11);
    const xs = Array.from({ length: 20000 }, () => keyIntervalMs(rng));
    console.log(
      `key interval: ${fmt(mean(xs))} ± ${fmt(sd(xs))} ms, median ${median(xs)}, ` +
        `range ${Math.min(...xs.slice(0, 5000))}–${Math.max(...xs.slice(0, 5000))}`,
    );
    expect(mean(xs)).toBeGreaterThanOrEqual(180);
    expect(mean(xs)).toBeLessThanOrEqual(300);
    expect(sd(xs)).toBeGreaterThanOrEqual(80);
    expect(sd(xs)).toBeLessThanOrEqual(150);
    // Right-skewed like a log-normal: the median sits clearly below the mean.
    expect(median(xs)).toBeLessThan(mean(xs) - 10);
    expect(xs.every((x) => x > 0)).toBe(true);
  });

  test('a typing plan carries the same timing', () => {
    const rng = seededRng(12);
    const delays = charDelays(planTyping(prose(rng, 4000), rng, { charsPerTypo: Infinity }).steps);
    console.log(`plan char delays: ${fmt(mean(delays))} ± ${fmt(sd(delays))} ms`);
    expect(mean(delays)).toBeGreaterThanOrEqual(180);
    expect(mean(delays)).toBeLessThanOrEqual(300);
    expect(sd(delays)).toBeGreaterThanOrEqual(80);
    expect(sd(delays)).toBeLessThanOrEqual(150);
  });
});

describe('typos', () => {
  test('about one corrected typo per 15–30 characters of prose', () => {
    const perTypo: number[] = [];
    for (let seed = 0; seed < 200; seed++) {
      const rng = seededRng(seed);
      const text = prose(rng, 200);
      const plan = planTyping(text, rng);
      perTypo.push(Array.from(text).length / Math.max(1, plan.typos));
    }
    const overall = 1 / mean(perTypo.map((x) => 1 / x));
    console.log(`typos: one per ${fmt(overall)} characters (mean gap ${DEFAULT_CHARS_PER_TYPO})`);
    expect(overall).toBeGreaterThanOrEqual(15);
    expect(overall).toBeLessThanOrEqual(30);
  });

  test('2–6 backspaces per 100 characters from call to call, most typos corrected at once', () => {
    // Calls of about 300 characters, as a form field or a message takes.
    const perHundred: number[] = [];
    let corrections = 0;
    let immediate = 0;
    for (let seed = 0; seed < 2000; seed++) {
      const rng = seededRng(1000 + seed);
      const text = prose(rng, 55).slice(0, 300);
      const { steps } = planTyping(text, rng);
      const backspaces = steps.filter((s) => s.kind === 'backspace').length;
      perHundred.push((backspaces / Array.from(text).length) * 100);
      steps.forEach((s, i) => {
        if (s.kind !== 'backspace' || steps[i - 1]?.kind === 'backspace') return;
        corrections += 1;
        if (steps[i + 1]?.kind !== 'backspace') immediate += 1;
      });
    }
    const sorted = [...perHundred].sort((a, b) => a - b);
    const at = (q: number): number => sorted[Math.floor(q * (sorted.length - 1))]!;
    const inside = perHundred.filter((x) => x >= 2 && x <= 6).length / perHundred.length;
    console.log(
      `backspaces per 100 chars: mean ${fmt(mean(perHundred))}, p5 ${fmt(at(0.05))}, ` +
        `p95 ${fmt(at(0.95))}, within 2–6: ${fmt(inside)}; immediate: ${fmt(immediate / corrections)}`,
    );
    expect(mean(perHundred)).toBeGreaterThanOrEqual(3);
    expect(mean(perHundred)).toBeLessThanOrEqual(5);
    expect(inside).toBeGreaterThanOrEqual(0.95);
    expect(immediate / corrections).toBeGreaterThanOrEqual(0.75);
  });

  test('a typo is a QWERTY neighbour in the same case, repaired after 0–2 more keys', () => {
    const extras = new Map<number, number>();
    const problems: string[] = [];
    for (let seed = 0; seed < 300; seed++) {
      const rng = seededRng(seed);
      const text = prose(rng, 60);
      const { steps, typos } = planTyping(text, rng, { charsPerTypo: 5 });
      const flagged = steps.filter((s) => s.kind === 'char' && s.typo).length;
      if (flagged !== typos) problems.push(`seed ${seed}: ${flagged} typo steps, typos ${typos}`);
      steps.forEach((s, i) => {
        if (s.kind !== 'char' || !s.typo) return;
        // What was meant: the first character retyped after the backspaces.
        let j = i + 1;
        while (steps[j]?.kind === 'char') j++;
        const firstBackspace = j;
        while (steps[j]?.kind === 'backspace') j++;
        const backspaces = j - firstBackspace;
        const meant = steps[j];
        const at = `seed ${seed} step ${i}`;
        if (meant?.kind !== 'char') return void problems.push(`${at}: nothing retyped`);
        if (!qwertyNeighbours(meant.char).includes(s.char)) {
          problems.push(`${at}: ${s.char} is no neighbour of ${meant.char}`);
        }
        // Case is kept: a capital never slips to a lower-case letter, nor the reverse.
        if ((isUpper(meant.char) && isLower(s.char)) || (isLower(meant.char) && isUpper(s.char))) {
          problems.push(`${at}: ${s.char} for ${meant.char} changes case`);
        }
        if (backspaces !== firstBackspace - i) problems.push(`${at}: ${backspaces} backspaces`);
        // The noticing pause is longer than a keystroke usually is.
        if (steps[firstBackspace]!.delayMs < 180) problems.push(`${at}: no noticing pause`);
        extras.set(backspaces - 1, (extras.get(backspaces - 1) ?? 0) + 1);
      });
    }
    console.log(`keys typed before noticing: ${JSON.stringify(Object.fromEntries(extras))}`);
    expect(problems).toEqual([]);
    expect([...extras.keys()].sort()).toEqual([0, 1, 2]);
  });

  test('the neighbour map is US QWERTY and symmetric', () => {
    expect([...qwertyNeighbours('a')].sort()).toEqual(['q', 's', 'w', 'z']);
    expect([...qwertyNeighbours('G')].sort()).toEqual(['B', 'F', 'H', 'T', 'V', 'Y']);
    expect(qwertyNeighbours('5')).toEqual(expect.arrayContaining(['4', '6', 't', 'r']));
    expect(qwertyNeighbours('é')).toEqual([]);
    expect(qwertyNeighbours(' ')).toEqual([]);
    for (const k of 'abcdefghijklmnopqrstuvwxyz0123456789') {
      for (const n of qwertyNeighbours(k)) expect(qwertyNeighbours(n)).toContain(k);
    }
  });
});

describe('the typed text is always exact', () => {
  test.each([Infinity, DEFAULT_CHARS_PER_TYPO, 3, 1])(
    'random Unicode, a typo per %p characters',
    (charsPerTypo) => {
      let typos = 0;
      for (let seed = 0; seed < 2500; seed++) {
        const rng = seededRng(seed);
        const text = randomUnicode(rng);
        const plan = planTyping(text, rng, { charsPerTypo });
        const result = applyTyping(plan.steps);
        if (result !== text) throw new Error(`seed ${seed}: ${JSON.stringify({ text, result })}`);
        // Every backspace removes one extra key, so: keys = characters + 2 × backspaces.
        const backspaces = plan.steps.filter((s) => s.kind === 'backspace').length;
        const keys = Array.from(text).length + 2 * backspaces;
        if (plan.keysSent !== plan.steps.length || plan.keysSent !== keys) {
          throw new Error(`seed ${seed}: keysSent ${plan.keysSent}, expected ${keys}`);
        }
        typos += plan.typos;
      }
      // Slips happen exactly when they are asked for.
      expect(typos > 0).toBe(Number.isFinite(charsPerTypo));
    },
  );

  test.each(['', '\n', 'é', 'e\u0301', '👩‍💻', '中文 text', 'a\n\nb', 'AAAA', '\ud83d'])(
    'edge case %j',
    (text) => {
      for (let seed = 0; seed < 200; seed++) {
        expect(applyTyping(planTyping(text, seededRng(seed), { charsPerTypo: 1 }).steps)).toBe(
          text,
        );
      }
    },
  );

  test('char steps are whole code points, never half a surrogate pair', () => {
    const plan = planTyping('😀👍🏽𝔸', seededRng(1));
    expect(plan.steps.map((s) => (s.kind === 'char' ? s.char : '⌫'))).toEqual([
      '😀',
      '👍',
      '🏽',
      '𝔸',
    ]);
  });

  test('a seed reproduces the plan', () => {
    const text = 'Hello, world 123';
    expect(planTyping(text, seededRng(5))).toEqual(planTyping(text, seededRng(5)));
    expect(() => planTyping(text, seededRng(5), { charsPerTypo: 0.5 })).toThrow(RangeError);
  });
});

describe('paste', () => {
  test('a human pause first, a fumble about one time in ten', () => {
    const rng = seededRng(21);
    const plans = Array.from({ length: 10000 }, () => planPaste(rng));
    const delays = plans.map((p) => p.delayBeforeMs);
    const fumbles = plans.filter((p) => p.fumbled);
    console.log(
      `paste: delay ${fmt(mean(delays))} ± ${fmt(sd(delays))} ms, ` +
        `fumbled ${fmt(fumbles.length / plans.length)}`,
    );
    expect(Math.min(...delays)).toBeGreaterThanOrEqual(300);
    expect(Math.max(...delays)).toBeLessThanOrEqual(1200);
    expect(fumbles.length / plans.length).toBeGreaterThan(0.08);
    expect(fumbles.length / plans.length).toBeLessThan(0.12);
    expect(fumbles.every((p) => p.fumbleUndoDelayMs >= 300 && p.fumbleRetryDelayMs >= 150)).toBe(
      true,
    );
    const clean = plans.filter((p) => !p.fumbled);
    expect(clean.every((p) => p.fumbleUndoDelayMs === 0 && p.fumbleRetryDelayMs === 0)).toBe(true);
  });
});
