/**
 * The mouse planner against the human-likeness targets, measured over thousands of
 * seeds. The metrics are computed from the plan's steps only, the way a detector watching
 * mousemove events would see them; the last block shows they reject a robotic planner.
 */
import {
  fittsMeanMs,
  pickLandingPoint,
  planMove,
  pressDurationMs,
  settleBeforePressMs,
} from '../src/human/mouse-plan';
import { seededRng } from '../src/human/random';
import type { Box, MovePlan, Point, Rng } from '../src/human/types';
import { mean, sd } from '@persona-browser/testkit/stats';

const minOf = (xs: readonly number[]): number => xs.reduce((a, b) => Math.min(a, b), Infinity);
const maxOf = (xs: readonly number[]): number => xs.reduce((a, b) => Math.max(a, b), -Infinity);
const fmt = (x: number): string => x.toFixed(3);

/** A random move of `distance` px in a random direction from a random start. */
function moveOf(distance: number, rng: Rng): { from: Point; to: Point } {
  const angle = rng.next() * 2 * Math.PI;
  const from = { x: 100 + rng.next() * 1500, y: 100 + rng.next() * 800 };
  const to = {
    x: Math.round(from.x + distance * Math.cos(angle)),
    y: Math.round(from.y + distance * Math.sin(angle)),
  };
  return { from, to };
}

interface SpeedSample {
  t: number;
  v: number;
}

/**
 * Speed over a sliding window of `window` event intervals (distance / time), centred on each
 * interval: light smoothing of the whole-pixel quantisation, as a detector would do.
 */
function smoothedSpeed(from: Point, plan: MovePlan, window = 5): SpeedSample[] {
  const pts = [{ ...from, t: 0 }, ...plan.steps];
  const segs = pts.slice(1).map((p, i) => {
    const q = pts[i]!;
    return { d: Math.hypot(p.x - q.x, p.y - q.y), dt: p.t - q.t, mid: (p.t + q.t) / 2 };
  });
  const half = Math.floor(window / 2);
  return segs.map((s, i) => {
    const part = segs.slice(Math.max(0, i - half), i + half + 1);
    const d = part.reduce((a, b) => a + b.d, 0);
    const dt = part.reduce((a, b) => a + b.dt, 0);
    return { t: s.mid, v: d / dt };
  });
}

/** Local maxima whose prominence is at least 15 % of the highest speed. */
function countPeaks(speed: readonly SpeedSample[]): number {
  const v = speed.map((s) => s.v);
  const top = maxOf(v);
  let peaks = 0;
  for (let i = 0; i < v.length; i++) {
    const here = v[i]!;
    const left = v[i - 1] ?? -Infinity;
    const right = v[i + 1] ?? -Infinity;
    if (!(here > left && here >= right)) continue;
    let leftBase = here;
    for (let j = i - 1; j >= 0 && v[j]! <= here; j--) leftBase = Math.min(leftBase, v[j]!);
    let rightBase = here;
    for (let j = i + 1; j < v.length && v[j]! <= here; j++) rightBase = Math.min(rightBase, v[j]!);
    if (here - Math.max(leftBase, rightBase) >= 0.15 * top) peaks += 1;
  }
  return peaks;
}

function pathLength(from: Point, plan: MovePlan): number {
  let prev = from;
  let len = 0;
  for (const s of plan.steps) {
    len += Math.hypot(s.x - prev.x, s.y - prev.y);
    prev = s;
  }
  return len;
}

/** Signed largest distance of a step from the straight line (positive: left of travel). */
function maxDeviation(from: Point, to: Point, plan: MovePlan): number {
  const dx = to.x - from.x;
  const dy = to.y - from.y;
  const len = Math.hypot(dx, dy);
  let best = 0;
  for (const s of plan.steps) {
    const d = (dx * (s.y - from.y) - dy * (s.x - from.x)) / len;
    if (Math.abs(d) > Math.abs(best)) best = d;
  }
  return best;
}

interface MoveStats {
  onePeak: number;
  peakInWindow: number;
  peakOverMean: number;
  peakAtMean: number;
}

function motionStats(plans: ReadonlyArray<{ from: Point; plan: MovePlan }>): MoveStats {
  let onePeak = 0;
  let inWindow = 0;
  const ratios: number[] = [];
  const positions: number[] = [];
  for (const { from, plan } of plans) {
    const speed = smoothedSpeed(from, plan);
    if (countPeaks(speed) === 1) onePeak += 1;
    const top = speed.reduce((a, b) => (b.v > a.v ? b : a));
    const at = top.t / plan.durationMs;
    positions.push(at);
    if (at >= 0.3 && at <= 0.6) inWindow += 1;
    ratios.push(top.v / (pathLength(from, plan) / plan.durationMs));
  }
  return {
    onePeak: onePeak / plans.length,
    peakInWindow: inWindow / plans.length,
    peakOverMean: mean(ratios),
    peakAtMean: mean(positions),
  };
}

/** Intervals between consecutive events (the first from the movement's start). */
function gapStats(plans: ReadonlyArray<{ plan: MovePlan }>) {
  const all: number[] = [];
  let uneven = 0;
  for (const { plan } of plans) {
    const gaps = plan.steps.map((s, i) => s.t - (plan.steps[i - 1]?.t ?? 0));
    if (new Set(gaps).size > 1) uneven += 1;
    all.push(...gaps);
  }
  const m = mean(all);
  return {
    mean: m,
    sd: sd(all),
    cv: sd(all) / m,
    min: minOf(all),
    max: maxOf(all),
    unevenMoves: uneven / plans.length,
  };
}

/** 2000 long-ish moves (200–1200 px, targets 10–60 px) from consecutive seeds. */
const sample = Array.from({ length: 2000 }, (_, seed) => {
  const rng = seededRng(seed);
  const { from, to } = moveOf(200 + rng.next() * 1000, rng);
  return { from, to, plan: planMove(from, to, 10 + rng.next() * 50, rng) };
});

describe('movement time (Fitts)', () => {
  test('grows with the index of difficulty', () => {
    const byId = [2, 4, 6].map((id) => {
      const distance = 20 * (2 ** id - 1); // D/W + 1 = 2^id with W = 20
      const times = Array.from({ length: 1500 }, (_, seed) => {
        const rng = seededRng(id * 100000 + seed);
        const { from, to } = moveOf(distance, rng);
        return planMove(from, to, 20, rng).durationMs;
      });
      return { id, mean: mean(times), sd: sd(times) };
    });
    console.log(
      'movement time by ID: ' +
        byId.map((b) => `ID ${b.id}: ${b.mean.toFixed(0)} ± ${b.sd.toFixed(0)} ms`).join(', '),
    );
    const [id2, id4, id6] = byId.map((b) => b.mean) as [number, number, number];
    expect(id4 - id2).toBeGreaterThan(150);
    expect(id6 - id4).toBeGreaterThan(150);
  });

  test('500 px to a 20 px target takes about 0.9–1.3 s', () => {
    const times = Array.from({ length: 3000 }, (_, seed) => {
      const rng = seededRng(seed);
      const { from, to } = moveOf(500, rng);
      return planMove(from, to, 20, rng).durationMs;
    });
    console.log(`500 px / 20 px: ${mean(times).toFixed(0)} ± ${sd(times).toFixed(0)} ms`);
    expect(mean(times)).toBeGreaterThanOrEqual(900);
    expect(mean(times)).toBeLessThanOrEqual(1300);
    // Per-move variation: not every movement of the same difficulty takes the same time.
    expect(sd(times)).toBeGreaterThan(50);
    expect(fittsMeanMs(500, 20)).toBeGreaterThan(fittsMeanMs(500, 40));
  });
});

describe('velocity profile', () => {
  /** 2000 shorter moves (50–200 px), where whole-pixel steps make the profile noisier. */
  const medium = Array.from({ length: 2000 }, (_, seed) => {
    const rng = seededRng(50000 + seed);
    const { from, to } = moveOf(50 + rng.next() * 150, rng);
    return { from, to, plan: planMove(from, to, 10 + rng.next() * 50, rng) };
  });

  test.each([
    ['200–1200 px', sample],
    ['50–200 px', medium],
  ])('%s: one peak, at 30–60 %% of the movement, peak/mean speed 1.5–2.5', (name, plans) => {
    const s = motionStats(plans);
    console.log(
      `velocity ${name}: one peak ${fmt(s.onePeak)}, peak in 30–60 % ${fmt(s.peakInWindow)}, ` +
        `peak at ${fmt(s.peakAtMean)} of the time on average, peak/mean ${fmt(s.peakOverMean)}`,
    );
    expect(s.onePeak).toBeGreaterThanOrEqual(0.95);
    expect(s.peakInWindow).toBeGreaterThanOrEqual(0.95);
    expect(s.peakOverMean).toBeGreaterThanOrEqual(1.5);
    expect(s.peakOverMean).toBeLessThanOrEqual(2.5);
  });
});

describe('event timing and shape', () => {
  test('steps are increasing in time, jittered, and end exactly on the target', () => {
    for (const { to, plan } of sample) {
      const last = plan.steps[plan.steps.length - 1]!;
      expect({ x: last.x, y: last.y }).toEqual(to);
      expect(last.t).toBe(plan.durationMs);
    }
    const g = gapStats(sample);
    console.log(
      `event gaps: ${fmt(g.mean)} ± ${fmt(g.sd)} ms, CV ${fmt(g.cv)}, ` +
        `range ${g.min}–${g.max} ms, moves with unequal gaps ${fmt(g.unevenMoves)}`,
    );
    expect(g.min).toBeGreaterThan(0);
    expect(g.cv).toBeGreaterThan(0.2);
    expect(g.unevenMoves).toBe(1);
  });

  test('long paths curve, to either side', () => {
    const deviations = sample.map(({ from, to, plan }) => maxDeviation(from, to, plan));
    const left = deviations.filter((d) => d > 0).length / deviations.length;
    const relative = sample.map(
      ({ from, to }, i) => Math.abs(deviations[i]!) / Math.hypot(to.x - from.x, to.y - from.y),
    );
    console.log(
      `curvature: max deviation / distance ${fmt(mean(relative))} ± ${fmt(sd(relative))}, ` +
        `left of travel ${fmt(left)}`,
    );
    expect(minOf(deviations.map(Math.abs))).toBeGreaterThan(3);
    expect(left).toBeGreaterThan(0.4);
    expect(left).toBeLessThan(0.6);
  });

  test('moves under 3 px are one or two events ending on the target', () => {
    for (let seed = 0; seed < 500; seed++) {
      const rng = seededRng(seed);
      const from = { x: 50, y: 50 };
      const to = { x: 50 + Math.floor(rng.next() * 3) - 1, y: 50 + Math.floor(rng.next() * 3) };
      const plan = planMove(from, to, 20, rng);
      expect(plan.steps.length).toBeGreaterThanOrEqual(1);
      expect(plan.steps.length).toBeLessThanOrEqual(2);
      expect(plan.steps[plan.steps.length - 1]).toMatchObject(to);
      expect(plan.steps[0]!.t).toBeGreaterThan(0);
    }
  });

  test('a seed reproduces the plan exactly; different seeds differ', () => {
    const from = { x: 10, y: 20 };
    const to = { x: 700, y: 400 };
    expect(planMove(from, to, 30, seededRng(42))).toEqual(planMove(from, to, 30, seededRng(42)));
    expect(planMove(from, to, 30, seededRng(42))).not.toEqual(
      planMove(from, to, 30, seededRng(43)),
    );
  });
});

describe('landing points and presses', () => {
  test('spread around the centre, never within the edge margin', () => {
    const rng = seededRng(7);
    // With the least spread each side must show: a sixth or so of a large side, some on a
    // middling one, none on a side of a few pixels (its centre is the only safe point).
    const boxes: Array<[Box, { x: number; y: number }]> = [
      [
        { x: 10, y: 20, width: 200, height: 40 },
        { x: 25, y: 1 },
      ],
      [
        { x: 10.5, y: 3.25, width: 3, height: 7.5 },
        { x: 0, y: 0 },
      ],
      [
        { x: 0, y: 0, width: 12, height: 1000 },
        { x: 0.5, y: 125 },
      ],
    ];
    for (const [box, minSd] of boxes) {
      const xs: number[] = [];
      const ys: number[] = [];
      const margin = (side: number): number => Math.max(1, side * 0.1);
      for (let i = 0; i < 10000; i++) {
        const p = pickLandingPoint(box, rng);
        xs.push(p.x);
        ys.push(p.y);
      }
      expect(minOf(xs)).toBeGreaterThanOrEqual(box.x + margin(box.width));
      expect(maxOf(xs)).toBeLessThanOrEqual(box.x + box.width - margin(box.width));
      expect(minOf(ys)).toBeGreaterThanOrEqual(box.y + margin(box.height));
      expect(maxOf(ys)).toBeLessThanOrEqual(box.y + box.height - margin(box.height));
      console.log(
        `landing in ${box.width}×${box.height}: mean offset from centre ` +
          `(${fmt(mean(xs) - box.x - box.width / 2)}, ${fmt(mean(ys) - box.y - box.height / 2)}), ` +
          `sd (${fmt(sd(xs))}, ${fmt(sd(ys))})`,
      );
      // Centred within half a pixel (whole-pixel rounding) or 2 % of the side.
      const tol = (side: number): number => Math.max(0.5, side * 0.02);
      expect(Math.abs(mean(xs) - (box.x + box.width / 2))).toBeLessThan(tol(box.width));
      expect(Math.abs(mean(ys) - (box.y + box.height / 2))).toBeLessThan(tol(box.height));
      // Spread, not a fixed point: SD near a sixth of the side on large sides.
      expect(sd(xs)).toBeGreaterThanOrEqual(minSd.x);
      expect(sd(ys)).toBeGreaterThanOrEqual(minSd.y);
    }
  });

  test('boxes under 3 px get their centre', () => {
    const rng = seededRng(1);
    expect(pickLandingPoint({ x: 5, y: 9, width: 2, height: 1 }, rng)).toEqual({ x: 6, y: 9.5 });
  });

  test('a press lasts 50–150 ms', () => {
    const rng = seededRng(3);
    const presses = Array.from({ length: 10000 }, () => pressDurationMs(rng));
    console.log(`press: ${mean(presses).toFixed(1)} ± ${sd(presses).toFixed(1)} ms`);
    expect(minOf(presses)).toBeGreaterThanOrEqual(50);
    expect(maxOf(presses)).toBeLessThanOrEqual(150);
    expect(sd(presses)).toBeGreaterThan(10);
    const settles = Array.from({ length: 2000 }, () => settleBeforePressMs(rng));
    expect(minOf(settles)).toBeGreaterThanOrEqual(60);
    expect(maxOf(settles)).toBeLessThanOrEqual(300);
  });
});

describe('the metrics have teeth', () => {
  /** What a naive bot does: a straight line at constant speed, one event every 16 ms. */
  function robot(from: Point, to: Point): MovePlan {
    const n = 40;
    const steps = Array.from({ length: n }, (_, i) => ({
      x: from.x + ((to.x - from.x) * (i + 1)) / n,
      y: from.y + ((to.y - from.y) * (i + 1)) / n,
      t: 16 * (i + 1),
    }));
    return { steps, durationMs: 16 * n };
  }

  test('a straight constant-speed train fails them', () => {
    const robots = sample.map(({ from, to }) => ({ from, to, plan: robot(from, to) }));
    const s = motionStats(robots);
    expect(s.onePeak).toBeLessThan(0.95);
    expect(s.peakOverMean).toBeLessThan(1.5);
    expect(
      robots.every(({ from, to, plan }) => Math.abs(maxDeviation(from, to, plan)) < 1e-6),
    ).toBe(true);
    expect(gapStats(robots).cv).toBeLessThan(0.2);
  });
});
