/** The random sources and distributions every planner statistic rests on. */
import {
  chance,
  clamp,
  logNormalFromMeanSd,
  normal,
  pick,
  seededRng,
  systemRng,
  uniform,
  within,
} from '../src/human/random';
import type { Rng } from '../src/human/types';
import { mean, sd } from '@persona-browser/testkit/stats';

const draw = (rng: Rng, n: number, f: () => number = () => rng.next()): number[] =>
  Array.from({ length: n }, f);

describe('seeded generator', () => {
  test('same seed, same sequence; neighbouring seeds differ from the first value', () => {
    expect(draw(seededRng(123), 50)).toEqual(draw(seededRng(123), 50));
    const firsts = new Set(Array.from({ length: 1000 }, (_, s) => seededRng(s).next()));
    expect(firsts.size).toBe(1000);
    expect(seededRng(2 ** 40 + 1).next()).not.toBe(seededRng(1).next());
    expect(() => seededRng(NaN)).toThrow(RangeError);
  });

  test('uniform on [0, 1): 100 buckets pass a chi-square test, no serial correlation', () => {
    const xs = draw(seededRng(99), 200000);
    expect(Math.min(...xs.slice(0, 50000))).toBeGreaterThanOrEqual(0);
    expect(xs.every((x) => x < 1)).toBe(true);
    const buckets = new Array<number>(100).fill(0);
    for (const x of xs) buckets[Math.floor(x * 100)]! += 1;
    const expected = xs.length / 100;
    const chi2 = buckets.reduce((a, b) => a + (b - expected) ** 2 / expected, 0);
    // 99 degrees of freedom: the 99.9th percentile is about 149.
    expect(chi2).toBeLessThan(149);
    let lag = 0;
    for (let i = 1; i < xs.length; i++) lag += (xs[i]! - 0.5) * (xs[i - 1]! - 0.5);
    expect(Math.abs(lag / (xs.length - 1) / (1 / 12))).toBeLessThan(0.01);
  });

  test('system generator is usable and not constant', () => {
    const xs = draw(systemRng(), 1000);
    expect(new Set(xs).size).toBeGreaterThan(990);
    expect(Math.abs(mean(xs) - 0.5)).toBeLessThan(0.05);
  });
});

describe('distributions', () => {
  const rng = seededRng(5);

  test('normal and log-normal have the asked mean and SD', () => {
    const n = draw(rng, 50000, () => normal(rng, 10, 3));
    expect(mean(n)).toBeCloseTo(10, 1);
    expect(sd(n)).toBeCloseTo(3, 1);
    const l = draw(rng, 50000, () => logNormalFromMeanSd(rng, 230, 110));
    expect(Math.abs(mean(l) - 230)).toBeLessThan(3);
    expect(Math.abs(sd(l) - 110)).toBeLessThan(4);
    expect(Math.min(...l.slice(0, 10000))).toBeGreaterThan(0);
  });

  test('helpers', () => {
    const u = draw(rng, 10000, () => uniform(rng, -2, 3));
    expect(Math.min(...u)).toBeGreaterThanOrEqual(-2);
    expect(Math.max(...u)).toBeLessThan(3);
    const c = draw(rng, 20000, () => (chance(rng, 0.3) ? 1 : 0));
    expect(mean(c)).toBeCloseTo(0.3, 1);
    const picked = new Set(draw(rng, 1000, () => pick(rng, [1, 2, 3])));
    expect([...picked].sort()).toEqual([1, 2, 3]);
    expect(() => pick(rng, [])).toThrow(RangeError);
    expect(clamp(5, 0, 3)).toBe(3);
    expect(clamp(-1, 0, 3)).toBe(0);
    const w = draw(rng, 10000, () => within(() => normal(rng, 0, 1), -1, 1));
    expect(Math.min(...w)).toBeGreaterThanOrEqual(-1);
    expect(Math.max(...w)).toBeLessThanOrEqual(1);
    // Truncation resamples rather than clamps: the bounds are not piled up.
    expect(w.filter((x) => Math.abs(x) === 1).length).toBeLessThan(10);
  });
});
