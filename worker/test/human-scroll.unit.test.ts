/**
 * The scroll planner against the scroll-page rules (docs/api.md) in whole wheel notches: every
 * notch is 80–120 whole px, a burst ends within one notch of where it aims, and inflation
 * 1.1–1.2, back-scroll 0.1–0.2 and net within ±10 % hold wherever whole notches allow them —
 * for every seed.
 */
import { seededRng } from '../src/human/random';
import { planScroll } from '../src/human/scroll-plan';
import type { ScrollPlan, WheelNotch } from '../src/human/types';
import { notchSizes, wholeNotchTotal } from '../src/human/wheel-notches';
import { mean, sd } from '@persona-browser/testkit/stats';

const sum = (notches: readonly WheelNotch[]): number => notches.reduce((a, n) => a + n.deltaY, 0);
const fmt = (x: number): string => x.toFixed(3);

/** Short requests (no back-scroll fits), the edge where it starts to fit, and ordinary ones. */
const SHORT = [1, 7, 50, 72, 73, 80, 119, 121, 133, 134, 140, 145, 146, 150, 200, 300, 333];
const ORDINARY = [334, 350, 400, 500, 777, 1000, 1234.5, 3000, 20000, 100000];
/** Seeds per distance and direction; fewer for the longest, whose plans have a thousand notches. */
const seedsFor = (distance: number): number => (distance > 5000 ? 150 : 1500);

/** What every plan must satisfy, whatever its distance, as a list of broken rules. */
function notchViolations(distance: number, plan: ScrollPlan): string[] {
  const bad: string[] = [];
  const sign = Math.sign(distance);
  for (const [part, notches, dir] of [
    ['main', plan.main, sign],
    ['back', plan.back, -sign],
  ] as const) {
    for (const n of notches) {
      const size = Math.abs(n.deltaY);
      if (Math.sign(n.deltaY) !== dir) bad.push(`${part} notch in the wrong direction`);
      if (!(Number.isInteger(size) && size >= 80 && size <= 120)) bad.push(`${part} notch ${size}`);
    }
  }
  if (plan.main.length === 0) bad.push('no main notch');
  if (sum(plan.main) !== plan.gross)
    bad.push(`main adds up to ${sum(plan.main)}, not ${plan.gross}`);
  for (const n of [...plan.main, ...plan.back]) {
    if (!(n.delayMs >= 20 && n.delayMs <= 400)) bad.push(`delay ${n.delayMs}`);
  }
  return bad;
}

/** The documented shape in full: what an ordinary request (334 px and more) must satisfy. */
function shapeViolations(distance: number, plan: ScrollPlan): string[] {
  const bad: string[] = [];
  const factor = plan.gross / distance;
  if (!(factor >= 1.1 && factor <= 1.2)) bad.push(`inflation ${factor}`);
  const back = Math.abs(sum(plan.back)) / Math.abs(plan.gross);
  if (!(back >= 0.1 && back <= 0.2)) bad.push(`back ${back}`);
  const net = (sum(plan.main) + sum(plan.back)) / distance;
  if (!(net >= 0.9 && net <= 1.1)) bad.push(`net ${net}`);
  if (!(plan.pauseMs >= 200 && plan.pauseMs <= 600)) bad.push(`pause ${plan.pauseMs}`);
  return bad;
}

/**
 * A short request: one burst, no back-scroll, ending within one notch of the request, within
 * ±10 % of it wherever a whole-notch total lies there.
 */
function shortViolations(distance: number, plan: ScrollPlan): string[] {
  const bad: string[] = [];
  const request = Math.abs(distance);
  const gross = Math.abs(plan.gross);
  if (plan.back.length !== 0 || plan.pauseMs !== 0) bad.push('a back-scroll');
  const notch = Math.max(...plan.main.map((n) => Math.abs(n.deltaY)));
  if (!(Math.abs(gross - request) < notch)) bad.push(`gross ${gross} over a notch off`);
  const reachable = request >= 80 / 1.1 && !(request > 120 / 0.9 && request < 160 / 1.1);
  if (reachable && !(gross >= 0.9 * request - 1e-9 && gross <= 1.1 * request + 1e-9)) {
    bad.push(`net ${gross / request}`);
  }
  return bad;
}

function check(distances: number[], rules: (d: number, p: ScrollPlan) => string[]): void {
  for (const distance of distances) {
    for (let seed = 0; seed < seedsFor(distance); seed++) {
      for (const d of [distance, -distance]) {
        const plan = planScroll(d, seededRng(seed));
        const bad = [...notchViolations(d, plan), ...rules(d, plan)];
        if (bad.length > 0) throw new Error(`distance ${d}, seed ${seed}: ${bad.join('; ')}`);
      }
    }
  }
}

describe('scroll plans', () => {
  test('ordinary requests: whole notches of 80–120 px in the documented shape, for every seed', () => {
    check(ORDINARY, shapeViolations);
  });

  test('short requests: whole notches ending within one notch of the request, no back-scroll', () => {
    check(SHORT, shortViolations);
  });

  test('a wheel cannot turn a part of a notch: the totals in between go to the nearest whole one', () => {
    for (const total of [80, 95, 120, 160, 161, 240, 241, 575, 12345]) {
      for (let seed = 0; seed < 300; seed++) {
        const sizes = notchSizes(total, seededRng(seed));
        expect(sizes.reduce((a, b) => a + b, 0)).toBe(total);
        expect(sizes.every((s) => Number.isInteger(s) && s >= 80 && s <= 120)).toBe(true);
      }
    }
    for (const total of [1, 41, 79, 121, 159, 100.5]) {
      expect(() => notchSizes(total, seededRng(1))).toThrow(RangeError);
    }
    expect(wholeNotchTotal(41, 37, 45)).toBe(80);
    expect(wholeNotchTotal(139, 0, 1000)).toBe(120);
    expect(wholeNotchTotal(141, 0, 1000)).toBe(160);
    // Within the bounds when a whole-notch total lies there, even if another is nearer.
    expect(wholeNotchTotal(141, 117, 143)).toBe(120);
    expect(wholeNotchTotal(575.4, 500, 700)).toBe(575);
  });

  test('the distributions fill their ranges (request of 1000 px)', () => {
    const plans = Array.from({ length: 5000 }, (_, seed) => planScroll(1000, seededRng(seed)));
    const factors = plans.map((p) => p.gross / 1000);
    const backs = plans.map((p) => Math.abs(sum(p.back)) / p.gross);
    const nets = plans.map((p) => sum(p.main) + sum(p.back));
    const notches = plans.flatMap((p) => [...p.main, ...p.back].map((n) => Math.abs(n.deltaY)));
    console.log(
      `scroll 1000: gross ${fmt(mean(factors) * 1000)} (factor ${fmt(mean(factors))} ± ` +
        `${fmt(sd(factors))}), back ${fmt(mean(backs))} ± ${fmt(sd(backs))} of gross, ` +
        `net ${fmt(mean(nets))} ± ${fmt(sd(nets))} px, notch ${fmt(mean(notches))} ± ` +
        `${fmt(sd(notches))} px`,
    );
    expect(mean(factors)).toBeGreaterThan(1.13);
    expect(mean(factors)).toBeLessThan(1.17);
    expect(Math.abs(mean(nets) - 1000)).toBeLessThan(20);
    // Spread over the range, not one fixed value.
    expect(Math.min(...factors)).toBeLessThan(1.11);
    expect(Math.max(...factors)).toBeGreaterThan(1.19);
    expect(Math.min(...backs)).toBeLessThan(0.11);
    expect(Math.max(...backs)).toBeGreaterThan(0.19);
    expect(Math.min(...notches)).toBe(80);
    expect(Math.max(...notches)).toBe(120);
    expect(Math.abs(mean(notches) - 100)).toBeLessThan(5);
  });

  test('the documented example: a request of 500 reports about 570 and moves about 500', () => {
    const plans = Array.from({ length: 5000 }, (_, seed) => planScroll(500, seededRng(seed)));
    const gross = mean(plans.map((p) => p.gross));
    const net = mean(plans.map((p) => sum(p.main) + sum(p.back)));
    console.log(`scroll 500: gross ${fmt(gross)} px, net ${fmt(net)} px`);
    expect(gross).toBeGreaterThan(560);
    expect(gross).toBeLessThan(590);
    expect(Math.abs(net - 500)).toBeLessThan(25);
  });

  test('pacing is bursty: quick flicks with occasional longer gaps', () => {
    const gaps = Array.from({ length: 2000 }, (_, seed) => planScroll(3000, seededRng(seed)))
      .flatMap((p) => p.main.slice(1))
      .map((n) => n.delayMs);
    const quick = gaps.filter((g) => g <= 60).length / gaps.length;
    const long = gaps.filter((g) => g >= 150).length / gaps.length;
    console.log(
      `wheel gaps: ${fmt(mean(gaps))} ± ${fmt(sd(gaps))} ms; ` +
        `≤ 60 ms ${fmt(quick)}, ≥ 150 ms ${fmt(long)}`,
    );
    expect(quick + long).toBe(1);
    expect(quick).toBeGreaterThan(0.6);
    expect(long).toBeGreaterThan(0.1);
    expect(sd(gaps) / mean(gaps)).toBeGreaterThan(0.5);
  });

  test('negative distances mirror positive ones', () => {
    for (let seed = 0; seed < 200; seed++) {
      for (const d of [777, 150]) {
        const down = planScroll(d, seededRng(seed));
        const up = planScroll(-d, seededRng(seed));
        const flip = (ns: WheelNotch[]): WheelNotch[] =>
          ns.map((n) => ({ deltaY: -n.deltaY, delayMs: n.delayMs }));
        expect(up).toEqual({
          gross: -down.gross,
          main: flip(down.main),
          pauseMs: down.pauseMs,
          back: flip(down.back),
        });
      }
    }
  });

  test('zero is an empty plan; nonsense is refused; a seed reproduces the plan', () => {
    expect(planScroll(0, seededRng(1))).toEqual({ gross: 0, main: [], pauseMs: 0, back: [] });
    expect(() => planScroll(NaN, seededRng(1))).toThrow(RangeError);
    expect(() => planScroll(Infinity, seededRng(1))).toThrow(RangeError);
    expect(planScroll(1000, seededRng(9))).toEqual(planScroll(1000, seededRng(9)));
    expect(planScroll(1000, seededRng(9))).not.toEqual(planScroll(1000, seededRng(10)));
  });
});
