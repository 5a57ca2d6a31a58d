/**
 * How long typing and scrolling plans take, as the primitives' up-front refusal reads it: a
 * message of a few hundred characters fits in one call, a text of thousands never does.
 */
import { DEFAULT_TIMING, planBudgetMs } from '../src/browser/timing';
import { planTyping } from '../src/human/keyboard-plan';
import { scrollPlanMs, typingPlanMs } from '../src/human/plan-duration';
import { seededRng } from '../src/human/random';
import { planScroll } from '../src/human/scroll-plan';

const PROSE =
  'The quick brown fox jumps over the lazy dog, then naps under a tall oak tree. ' +
  'Meanwhile, 3 curious kids wander by and ask what time it is; nobody answers. ';
const budget = planBudgetMs(DEFAULT_TIMING);

test('the default budget is 96 s: 80 % of the 120 s call deadline', () => {
  expect(budget).toBe(96_000);
});

test('about 370 characters of prose fit in one type-text call; 300 always do, 10,000 never', () => {
  const text = PROSE.repeat(70);
  const longest: number[] = [];
  for (let seed = 0; seed < 200; seed++) {
    const fits = (n: number): boolean =>
      typingPlanMs(planTyping(text.slice(0, n), seededRng(seed * 7919 + n))) <= budget;
    let lo = 1;
    let hi = 1000;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (fits(mid)) lo = mid;
      else hi = mid - 1;
    }
    longest.push(lo);
    expect(fits(300)).toBe(true);
    expect(fits(10_000)).toBe(false);
  }
  longest.sort((a, b) => a - b);
  const median = longest[longest.length >> 1] as number;
  console.log(
    `characters typeable in one call: median ${median}, range ${longest[0]}–${longest.at(-1)}`,
  );
  expect(median).toBeGreaterThanOrEqual(340);
  expect(median).toBeLessThanOrEqual(400);
});

test('a plan takes at least the pauses it is made of: typing and scrolling', () => {
  const rng = seededRng(3);
  const typing = planTyping('Hello, World', rng);
  const pauses = typing.steps.reduce((sum, s) => sum + s.delayMs, 0);
  expect(typingPlanMs(typing)).toBeGreaterThanOrEqual(pauses);
  const scroll = planScroll(2_000, rng);
  const notches = [...scroll.main, ...scroll.back].reduce((sum, n) => sum + n.delayMs, 0);
  expect(scrollPlanMs(scroll)).toBeGreaterThanOrEqual(notches + scroll.pauseMs);
  // A scroll of 100,000 px is minutes of wheel turning: over any one call's budget.
  expect(scrollPlanMs(planScroll(100_000, rng))).toBeGreaterThan(budget);
});
