/**
 * Wheel scrolling as a pure function of (distance, random source) → timed notches
 * (docs/api.md, Primitives: scroll-page). People overshoot with a flick of the wheel and roll
 * back a little: the main burst covers the request times 1.1–1.2, then, after a pause, a short
 * back-scroll in the other direction brings the net movement to within ±10 % of the request.
 *
 * A wheel turns by whole notches of 80–120 px (wheel-notches.ts), never by a part of one, so a
 * plan's totals are whole-notch totals and the shape holds as far as whole notches allow:
 * - From about 334 px up, all of it holds: a back-scroll of at least one notch is at most
 *   0.2 of a main burst of at least 400 px (1.2 × 334), with the net still ≥ 0.9 of the
 *   request. Near that end the back-scroll takes the upper part of its range, so the net
 *   sits below the request (a request of 500 moves about 485).
 * - Below that, a back-scroll of one whole notch would be more than 0.2 of the main burst and
 *   would leave the net short of 0.9 of the request: there is no back-scroll, and the burst
 *   covers the request itself, a little past it (1.0–1.1 ×), as a short turn of the wheel
 *   does. `scrolled_distance` then is about the request rather than 1.1–1.2 times it.
 * - No whole-notch total lies within ±10 % of a request under about 73 px (one notch is 80)
 *   or of about 134–145 px (between one notch of 120 and two of 80): the burst is the nearest
 *   whole-notch total, so any non-zero request turns the wheel at least one notch.
 */
import type { Rng, ScrollPlan, WheelNotch } from './types';
import { logNormalFromMeanSd, uniform, within } from './random';
import {
  NOTCH_MAX,
  NOTCH_MIN,
  ceilPx,
  floorPx,
  isWholeNotchTotal,
  notchSizes,
  wholeNotchTotal,
} from './wheel-notches';

/** Totals of the two bursts, whole px, both positive or zero. */
interface ScrollShape {
  gross: number;
  back: number;
}

/**
 * The overshoot of the scroll rule in whole notches, or null when the request is too short for
 * a back-scroll of one whole notch within the rule's bounds.
 */
function overshoot(request: number, rng: Rng): ScrollShape | null {
  // The back-scroll is at least one notch and at most 0.2 of the gross, and leaves the net at
  // least 0.9 of the request: the gross is at least 5 notches and the net floor plus one.
  const grossLo = Math.max(ceilPx(1.1 * request), 5 * NOTCH_MIN, ceilPx(0.9 * request + NOTCH_MIN));
  const grossHi = floorPx(1.2 * request);
  if (grossLo > grossHi) return null;
  const gross = Math.min(Math.floor(uniform(rng, grossLo, grossHi + 1)), grossHi);
  // The back fraction lies in [0.1, 0.2] of the gross and keeps the net within [0.9, 1.1] of
  // the request. Skewed towards its low end (mean ≈ lo + (hi − lo) / 3 ≈ 0.13 of the gross)
  // so that the net centres on the request: 1.15 × (1 − 0.13) ≈ 1.0, as the API's example
  // (500 → ~570 → ~500) has it.
  const backLo = Math.max(ceilPx(0.1 * gross), ceilPx(gross - 1.1 * request), NOTCH_MIN);
  const backHi = Math.min(floorPx(0.2 * gross), floorPx(gross - 0.9 * request));
  if (backLo > backHi) return null;
  let back = Math.round(backLo + (backHi - backLo) * rng.next() ** 2);
  if (!isWholeNotchTotal(back)) {
    // Between one notch and two: the nearer of one full notch and two small ones that the
    // bounds allow (one of them always fits: the range is at least 0.1 of 400 px wide).
    const one = NOTCH_MAX >= backLo;
    const two = 2 * NOTCH_MIN <= backHi;
    if (!one && !two) return null;
    back = one && (!two || back - NOTCH_MAX < 2 * NOTCH_MIN - back) ? NOTCH_MAX : 2 * NOTCH_MIN;
  }
  return { gross, back };
}

/**
 * A short turn of the wheel: no overshoot to roll back, the burst ends a little past the
 * request, at the nearest whole-notch total within ±10 % of it when there is one.
 */
function shortTurn(request: number, rng: Rng): ScrollShape {
  const aim = request * uniform(rng, 1, 1.1);
  let gross = wholeNotchTotal(aim, 0.9 * request, 1.1 * request);
  // A request too short for even the smallest notch to be within 10 % of it: one notch, of
  // a size that varies a little, as the smallest turn a finger makes.
  if (1.1 * request < NOTCH_MIN) gross = Math.floor(uniform(rng, NOTCH_MIN, 91));
  return { gross, back: 0 };
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
  if (distance === 0) return { gross: 0, main: [], pauseMs: 0, back: [] };
  const sign = Math.sign(distance);
  const request = Math.abs(distance);
  const shape = overshoot(request, rng) ?? shortTurn(request, rng);
  const main = pace(notchSizes(shape.gross, rng), sign, rng);
  if (shape.back === 0) return { gross: sign * shape.gross, main, pauseMs: 0, back: [] };
  const pauseMs = Math.round(uniform(rng, 200, 600));
  const back = pace(notchSizes(shape.back, rng), -sign, rng);
  return { gross: sign * shape.gross, main, pauseMs, back };
}
