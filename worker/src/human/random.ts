/**
 * Random sources and the few distributions the planners draw from. Planners never call
 * Math.random: they take an `Rng`, so a test (or a bug report) can replay a plan from its seed.
 */
import { randomBytes } from 'node:crypto';
import type { Rng } from './types';

// Read once: under jest's module sandbox every lookup of the global `Math` is slow, and
// these functions run per event for thousands of sampled plans.
const { PI, cos, exp, floor, imul, log, max, min, sqrt, trunc } = Math;

const TWO_POW_32 = 4294967296;

/**
 * A small-fast-counter generator over four 32-bit words: cheap, with no short cycles (the
 * counter word alone guarantees a period of at least 2^32) and good enough statistics for
 * human-timing noise. It is not for secrets.
 */
function counterRng(a0: number, b0: number, c0: number, d0: number): Rng {
  let a = a0 | 0;
  let b = b0 | 0;
  let c = c0 | 0;
  let d = d0 | 0;
  const next = (): number => {
    const t = (((a + b) | 0) + d) | 0;
    d = (d + 1) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) | 0;
    return (t >>> 0) / TWO_POW_32;
  };
  // The first outputs still echo the initial words; a few rounds mix them through the state.
  for (let i = 0; i < 12; i++) next();
  return { next };
}

/** A 32-bit avalanche: every input bit flips about half the output bits. */
function mix32(x: number): number {
  let z = x | 0;
  z = imul(z ^ (z >>> 16), 0x7feb352d);
  z = imul(z ^ (z >>> 15), 0x846ca68b);
  return (z ^ (z >>> 16)) >>> 0;
}

/** A reproducible source: the same seed always gives the same sequence. */
export function seededRng(seed: number): Rng {
  if (!Number.isFinite(seed)) throw new RangeError(`seed must be a finite number, got ${seed}`);
  const lo = trunc(seed) >>> 0;
  const hi = floor(trunc(seed) / TWO_POW_32) >>> 0;
  // Spread the seed over the four state words with distinct odd offsets (a Weyl step), so
  // that seeds 1, 2, 3… do not share state words.
  const w = (k: number): number => mix32((lo + imul(k, 0x9e3779b9)) ^ mix32(hi + k));
  return counterRng(w(1), w(2), w(3), w(4));
}

/** An unpredictable source for production: the state comes from the OS's CSPRNG. */
export function systemRng(): Rng {
  const bytes = randomBytes(16);
  return counterRng(
    bytes.readUInt32LE(0),
    bytes.readUInt32LE(4),
    bytes.readUInt32LE(8),
    bytes.readUInt32LE(12),
  );
}

export function clamp(value: number, lo: number, hi: number): number {
  return min(hi, max(lo, value));
}

/** Uniform in [a, b). */
export function uniform(rng: Rng, a: number, b: number): number {
  return a + (b - a) * rng.next();
}

/** True with probability `p`. */
export function chance(rng: Rng, p: number): boolean {
  return rng.next() < p;
}

export function pick<T>(rng: Rng, items: readonly T[]): T {
  const item = items[floor(rng.next() * items.length)];
  if (item === undefined) throw new RangeError('pick from an empty list');
  return item;
}

/** Normal by Box–Muller; one value per call (the twin is dropped to keep helpers stateless). */
export function normal(rng: Rng, mean: number, sd: number): number {
  const u1 = 1 - rng.next(); // (0, 1]: log(0) is never taken
  const u2 = rng.next();
  return mean + sd * sqrt(-2 * log(u1)) * cos(2 * PI * u2);
}

/**
 * Log-normal with the given mean and SD of the value itself (not of its logarithm): human
 * reaction and key times are right-skewed, never negative, and are quoted as mean ± SD.
 */
export function logNormalFromMeanSd(rng: Rng, mean: number, sd: number): number {
  if (!(mean > 0) || !(sd >= 0)) throw new RangeError('log-normal needs mean > 0 and sd >= 0');
  const sigma2 = log(1 + (sd * sd) / (mean * mean));
  const mu = log(mean) - sigma2 / 2;
  return exp(mu + sqrt(sigma2) * normal(rng, 0, 1));
}

/**
 * Draws until the value falls in [lo, hi] (a truncated distribution, so the shape inside the
 * bounds is kept rather than piling mass on the edges); after `tries` misses it clamps, which
 * only matters when the bounds sit far in a tail.
 */
export function within(draw: () => number, lo: number, hi: number, tries = 32): number {
  let value = draw();
  for (let i = 1; i < tries && !(value >= lo && value <= hi); i++) value = draw();
  return clamp(value, lo, hi);
}
