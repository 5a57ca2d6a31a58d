/**
 * Wheel scrolling as a pure function of (distance, random source) → timed notches (SPEC,
 * Primitive rules 3–6). People overshoot with a flick of the wheel and roll back a little: the
 * main burst covers the request times 1.1–1.2, then, after a pause, a short back-scroll in the
 * other direction brings the net movement to within ±10 % of the request.
 */
import type { Rng, ScrollPlan, WheelNotch } from './types';
import { logNormalFromMeanSd, uniform, within } from './random';

const NOTCH_MIN = 80;
const NOTCH_MAX = 120;
/** A final remainder notch is kept at least this big when the total allows it. */
const MIN_TAIL = 40;

/**
 * Splits a positive total into notches of 80–120 whole px, the last one taking the remainder
 * (fractional, at least 40 px when the total exceeds one notch), so the sum is exact.
 */
function notchSizes(total: number, rng: Rng): number[] {
  const sizes: number[] = [];
  let left = total;
  while (left > NOTCH_MAX) {
    // Leave at least MIN_TAIL behind so the last notch is not a stray 2 px twitch.
    const top = Math.min(NOTCH_MAX, Math.floor(left - MIN_TAIL));
    const size = Math.floor(uniform(rng, NOTCH_MIN, top + 1));
    sizes.push(size);
    left -= size;
  }
  if (left > 0) sizes.push(left);
  return sizes;
}

/**
 * Wheel pacing comes in flicks: a finger rolls 2–6 notches 20–60 ms apart, lifts, and rolls
 * again after 150–400 ms.
 */
function pace(sizes: readonly number[], sign: number, rng: Rng): WheelNotch[] {
  const notches: WheelNotch[] = [];
  let flickLeft = 0;
  for (const size of sizes) {
    let delayMs: number;
    if (flickLeft > 0) {
      delayMs = within(() => logNormalFromMeanSd(rng, 38, 10), 20, 60);
    } else {
      flickLeft = Math.floor(uniform(rng, 2, 7));
      // The first notch of the plan is after a brief reach for the wheel.
      delayMs = notches.length === 0 ? uniform(rng, 30, 120) : uniform(rng, 150, 400);
    }
    flickLeft -= 1;
    notches.push({ deltaY: sign * size, delayMs: Math.round(delayMs) });
  }
  return notches;
}

export function planScroll(distance: number, rng: Rng): ScrollPlan {
  if (!Number.isFinite(distance)) throw new RangeError(`distance must be finite, got ${distance}`);
  if (distance === 0) return { inflated: 0, main: [], pauseMs: 0, back: [] };
  const sign = Math.sign(distance);
  const factor = uniform(rng, 1.1, 1.2);
  const inflated = distance * factor;
  // The back fraction b must lie in [0.1, 0.2] of the inflated distance (SPEC) and keep the
  // net, factor·(1 − b), within [0.9, 1.1] of the request. With factor ≥ 1.1 the lower end
  // is always 0.1; the upper end drops below 0.2 when factor < 1.125 (1.1 × 0.8 = 0.88).
  const backLo = Math.max(0.1, 1 - 1.1 / factor);
  const backHi = Math.min(0.2, 1 - 0.9 / factor);
  // Skewed towards the low end (mean ≈ lo + (hi − lo) / 3 ≈ 0.13) so the net movement centres
  // on the request: 1.15 × (1 − 0.13) ≈ 1.0, as SPEC's example (500 → ~570 → ~500) has it.
  const backFraction = backLo + (backHi - backLo) * rng.next() ** 2;
  const gross = Math.abs(inflated);
  const main = pace(notchSizes(gross, rng), sign, rng);
  const pauseMs = Math.round(uniform(rng, 200, 600));
  const back = pace(notchSizes(gross * backFraction, rng), -sign, rng);
  return { inflated, main, pauseMs, back };
}
