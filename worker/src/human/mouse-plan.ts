/**
 * Mouse motion as a pure function of (start, target, random source) → timed move events.
 *
 * The model, in the order a human movement has it:
 *  - how long: Fitts's law, MT = a + b·log2(D/W + 1), times a per-move factor (people are not
 *    metronomes);
 *  - where: a cubic Bézier whose two control points sit off the straight line on a random
 *    side, so the path is an arc (occasionally a gentle S), plus a small smooth tremor;
 *  - how fast along the path: one bell-shaped speed profile, the minimum-jerk profile
 *    generalised so the peak can come before half-time (aimed movements decelerate longer);
 *  - when events fire: jittered intervals, as a real mouse and event loop deliver them.
 */
import type { Box, MouseStep, MovePlan, Point, Rng } from './types';
import { chance, clamp, logNormalFromMeanSd, normal, uniform, within } from './random';
import { at } from '../util';

// Read once: under jest's module sandbox every lookup of the global `Math` is slow, and
// these functions run per event for thousands of sampled plans.
const { PI, ceil, floor, hypot, log2, max, min, pow, round, sin } = Math;

/** Fitts's law intercept and slope (ms, ms/bit), typical of mouse pointing studies. */
const FITTS_A_MS = 230;
const FITTS_B_MS = 190;
/** No single aimed movement takes longer, however small the target. */
const MAX_MOVE_MS = 2500;
/** Below this distance (px) a move is a nudge: one or two events, no arc. */
const NUDGE_PX = 3;

/** Mean movement time (ms) for a distance and target width, before per-move variation. */
export function fittsMeanMs(distance: number, targetWidth: number): number {
  // An unknown width (NaN) counts as the smallest target: slow and careful, never broken.
  const width = Number.isNaN(targetWidth) ? 1 : max(1, targetWidth);
  return min(MAX_MOVE_MS, FITTS_A_MS + FITTS_B_MS * log2(distance / width + 1));
}

/** Pause between two mouse events: 7–22 ms around 12.5, like a 60–125 Hz device plus jitter. */
function eventGapMs(rng: Rng): number {
  return round(within(() => logNormalFromMeanSd(rng, 12.5, 3.5), 7, 22));
}

export function planMove(from: Point, to: Point, targetWidth: number, rng: Rng): MovePlan {
  const distance = hypot(to.x - from.x, to.y - from.y);
  if (!Number.isFinite(distance)) throw new RangeError('move endpoints must be finite');
  if (distance < NUDGE_PX) return nudge(from, to, distance, rng);

  const factor = within(() => logNormalFromMeanSd(rng, 1, 0.12), 0.75, 1.35);
  const nominalMs = round(fittsMeanMs(distance, targetWidth) * factor);
  const pathAt = arcLengthPath(curvedPath(from, to, distance, rng));
  const progressAt = speedProfile(uniform(rng, 0.36, 0.5));
  // Physiological tremor: 8–12 Hz, under a pixel or so, across the path and zero at both ends.
  const tremorPx = uniform(rng, 0.2, 1.0);
  const tremorHz = uniform(rng, 8, 12);
  const tremorPhase = uniform(rng, 0, 2 * PI);

  const target = { x: round(to.x), y: round(to.y) };
  const steps: MouseStep[] = [];
  let last = { x: round(from.x), y: round(from.y) };
  for (let t = eventGapMs(rng); t < nominalMs - 4; t += eventGapMs(rng)) {
    const s = progressAt(t / nominalMs);
    const { point, normal: n } = pathAt(s);
    const wobble = tremorPx * sin(PI * s) * sin((2 * PI * tremorHz * t) / 1000 + tremorPhase);
    // Whole pixels, as a mouse at device-pixel ratio 1 reports them; a sample that lands on
    // the same pixel as the last one is no event at all (a real mouse sends none).
    const x = round(point.x + n.x * wobble);
    const y = round(point.y + n.y * wobble);
    if (x === last.x && y === last.y) continue;
    if (x === target.x && y === target.y) {
      // On the target pixel already: the movement is over, finish here on the exact target.
      steps.push({ x: to.x, y: to.y, t });
      return { steps, durationMs: t };
    }
    last = { x, y };
    steps.push({ x, y, t });
  }
  steps.push({ x: to.x, y: to.y, t: nominalMs });
  return { steps, durationMs: nominalMs };
}

/** A move of under 3 px: one event, or two when there is a whole pixel in between. */
function nudge(from: Point, to: Point, distance: number, rng: Rng): MovePlan {
  const t1 = eventGapMs(rng);
  if (distance < 1.5) return { steps: [{ x: to.x, y: to.y, t: t1 }], durationMs: t1 };
  const mid = { x: round((from.x + to.x) / 2), y: round((from.y + to.y) / 2) };
  const t2 = t1 + eventGapMs(rng);
  return {
    steps: [
      { ...mid, t: t1 },
      { x: to.x, y: to.y, t: t2 },
    ],
    durationMs: t2,
  };
}

/**
 * The Bézier from `from` to `to`. Each control point sits at a random fraction along the line
 * and a signed offset across it proportional to the distance (capped, so a long move does not
 * swing far off screen). Both offsets share a side 85 % of the time (an arc), else a mild S.
 */
function curvedPath(from: Point, to: Point, distance: number, rng: Rng): (u: number) => Point {
  const ux = (to.x - from.x) / distance;
  const uy = (to.y - from.y) / distance;
  const side = chance(rng, 0.5) ? 1 : -1;
  const bend = side * min(180, distance * uniform(rng, 0.05, 0.18));
  const bend2 = bend * uniform(rng, 0.4, 1.1) * (chance(rng, 0.85) ? 1 : -0.5);
  const control = (along: number, across: number): Point => ({
    x: from.x + ux * along * distance - uy * across,
    y: from.y + uy * along * distance + ux * across,
  });
  const c1 = control(uniform(rng, 0.15, 0.35), bend);
  const c2 = control(uniform(rng, 0.6, 0.85), bend2);
  return (u) => {
    const v = 1 - u;
    const w0 = v * v * v;
    const w1 = 3 * v * v * u;
    const w2 = 3 * v * u * u;
    const w3 = u * u * u;
    return {
      x: w0 * from.x + w1 * c1.x + w2 * c2.x + w3 * to.x,
      y: w0 * from.y + w1 * c1.y + w2 * c2.y + w3 * to.y,
    };
  };
}

const PATH_SAMPLES = 128;

/**
 * Re-parametrises a curve by arc length: a Bézier's own parameter runs faster where control
 * points are far apart, which would put bumps into the speed profile we want to control.
 * Returns the point at fraction `s` of the length and the unit normal there (for tremor).
 */
function arcLengthPath(
  curve: (u: number) => Point,
): (s: number) => { point: Point; normal: Point } {
  const points: Point[] = [];
  const lengths: number[] = [];
  let length = 0;
  for (let i = 0; i <= PATH_SAMPLES; i++) {
    const point = curve(i / PATH_SAMPLES);
    const prev = points.at(-1) ?? point;
    length += hypot(point.x - prev.x, point.y - prev.y);
    points.push(point);
    lengths.push(length);
  }
  const total = length;
  return (s) => {
    const goal = clamp(s, 0, 1) * total;
    let lo = 0;
    let hi = PATH_SAMPLES;
    while (hi - lo > 1) {
      const mid = (lo + hi) >> 1;
      if (at(lengths, mid) < goal) lo = mid;
      else hi = mid;
    }
    const a = at(points, lo);
    const b = at(points, hi);
    const l0 = at(lengths, lo);
    const seg = at(lengths, hi) - l0;
    const f = seg > 0 ? (goal - l0) / seg : 0;
    const dx = b.x - a.x;
    const dy = b.y - a.y;
    const len = hypot(dx, dy) || 1;
    return {
      point: { x: a.x + dx * f, y: a.y + dy * f },
      normal: { x: -dy / len, y: dx / len },
    };
  };
}

const PROFILE_SAMPLES = 256;

/**
 * Fraction of the path covered at fraction `p` of the time, for a speed profile proportional
 * to p^α·(1−p)^β. With α = β = 2 this is exactly the minimum-jerk profile (30p²(1−p)², i.e.
 * position 10p³−15p⁴+6p⁵); keeping α + β = 4 keeps its sharpness (peak ≈ 1.9 × mean speed)
 * while the peak moves to α / (α + β) = `peakAt`.
 */
function speedProfile(peakAt: number): (p: number) => number {
  const alpha = 4 * peakAt;
  const beta = 4 - alpha;
  const cumulative: number[] = [0];
  let sum = 0;
  let prev = 0;
  for (let i = 1; i <= PROFILE_SAMPLES; i++) {
    const p = i / PROFILE_SAMPLES;
    const speed = pow(p, alpha) * pow(1 - p, beta);
    sum += (prev + speed) / 2; // trapezoid rule
    cumulative.push(sum);
    prev = speed;
  }
  return (p) => {
    const x = clamp(p, 0, 1) * PROFILE_SAMPLES;
    const i = min(PROFILE_SAMPLES - 1, floor(x));
    const a = at(cumulative, i);
    const b = at(cumulative, i + 1);
    return (a + (b - a) * (x - i)) / sum;
  };
}

/**
 * Where to land in the visible part of an element: around the centre (a normal with SD one
 * sixth of each side, truncated), on a whole pixel, and never within max(1 px, 10 %) of an
 * edge, where a click could fall on a neighbour or a border. Sides under 3 px: the centre.
 */
export function pickLandingPoint(visible: Box, rng: Rng): Point {
  return {
    x: landOnAxis(visible.x, visible.width, rng),
    y: landOnAxis(visible.y, visible.height, rng),
  };
}

function landOnAxis(start: number, size: number, rng: Rng): number {
  const centre = start + size / 2;
  if (size < 3) return centre;
  const margin = max(1, 0.1 * size);
  const lo = start + margin;
  const hi = start + size - margin;
  const value = within(() => normal(rng, centre, size / 6), lo, hi);
  // hi − lo ≥ 1 for every size ≥ 3, so a whole pixel always exists inside.
  return clamp(round(value), ceil(lo), floor(hi));
}

/** How long the button stays down: 50–150 ms, right-skewed around 90. */
export function pressDurationMs(rng: Rng): number {
  return round(within(() => logNormalFromMeanSd(rng, 90, 22), 50, 150));
}

/** The short settle between arriving on a target and pressing: 60–300 ms. */
export function settleBeforePressMs(rng: Rng): number {
  return round(within(() => logNormalFromMeanSd(rng, 120, 50), 60, 300));
}
