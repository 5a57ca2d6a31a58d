import { median } from '../stats';
import type { InputEvent, Recorded, Segment } from './events';
import { segments } from './events';
import type { Figures } from './figures';
import { diffs, fig, linearFit, mean, sd, share } from './figures';
import { landingFigures, pressFigures } from './press-metrics';
import { fittsId } from './trials';

/**
 * Mouse figures from a recorded log. A trial is everything between its mark and the next one;
 * its movement runs from the first mousemove to the last one before the press (or the last one
 * at all for a hover). Kinematics use each event's timeStamp, i.e. when the input reached the
 * browser; the handler-time (performance.now()) view is given beside it.
 */

interface Movement {
  d: number;
  w: number;
  moves: InputEvent[];
  /** Timestamps of the raw samples behind those mousemoves (pointermove coalesced events). */
  raw: number[];
  pointerEvents: number;
  mtMs: number;
}

function movementOf(s: Segment): Movement | null {
  const down = s.events.findIndex((e) => e.type === 'mousedown');
  const before = down >= 0 ? s.events.slice(0, down) : s.events;
  const moves = before.filter((e) => e.type === 'mousemove');
  if (moves.length < 3 || s.mark.d === undefined || s.mark.w === undefined) return null;
  const first = (moves[0] as InputEvent).ts;
  const last = (moves[moves.length - 1] as InputEvent).ts;
  const pointer = before.filter((e) => e.type === 'pointermove' && e.ts >= first && e.ts <= last);
  const raw = pointer
    .flatMap((e) => (e.raw ?? []).map((r) => r[0]))
    .filter((t) => t >= first && t <= last);
  return {
    d: s.mark.d,
    w: s.mark.w,
    moves,
    raw,
    pointerEvents: pointer.length,
    mtMs: last - first,
  };
}

const dist = (a: InputEvent, b: InputEvent): number => Math.hypot(b.x - a.x, b.y - a.y);
/**
 * Speeds are averaged over windows of at least this long: the page gets one mousemove per
 * frame carrying one or two raw samples, and that aliasing is not a change of speed.
 */
const SPEED_WINDOW_MS = 50;

/** Speed profile of one movement: (time since start, px/ms) pairs over ≥ 50 ms windows. */
function speedProfile(moves: readonly InputEvent[]): { t: number; v: number }[] {
  const cum = [0];
  for (let i = 1; i < moves.length; i++) {
    cum.push((cum[i - 1] as number) + dist(moves[i - 1] as InputEvent, moves[i] as InputEvent));
  }
  const t0 = (moves[0] as InputEvent).ts;
  const out: { t: number; v: number }[] = [];
  let j = 0;
  for (let k = 1; k < moves.length; k++) {
    const tk = (moves[k] as InputEvent).ts;
    while (j + 1 < k && tk - (moves[j + 1] as InputEvent).ts >= SPEED_WINDOW_MS) j++;
    const dt = tk - (moves[j] as InputEvent).ts;
    if (dt <= 0) continue;
    const v = ((cum[k] as number) - (cum[j] as number)) / dt;
    out.push({ t: ((moves[j] as InputEvent).ts + tk) / 2 - t0, v });
  }
  return out;
}

interface Shape {
  peakPos: number;
  peakToMean: number;
  peaks: number;
}

function shapeOf(m: Movement): Shape | null {
  if (m.moves.length < 6 || m.mtMs <= 0) return null;
  const profile = speedProfile(m.moves);
  if (profile.length < 4) return null;
  let peak = profile[0] as { t: number; v: number };
  for (const p of profile) if (p.v > peak.v) peak = p;
  let path = 0;
  for (let i = 1; i < m.moves.length; i++) {
    path += dist(m.moves[i - 1] as InputEvent, m.moves[i] as InputEvent);
  }
  // A peak is a rise above half the top speed after a fall below a quarter of it.
  let peaks = 0;
  let low = true;
  for (const p of profile) {
    if (low && p.v >= peak.v / 2) {
      peaks++;
      low = false;
    } else if (p.v < peak.v / 4) low = true;
  }
  return { peakPos: peak.t / m.mtMs, peakToMean: peak.v / (path / m.mtMs), peaks };
}

/** ID buckets [1,2), [2,3) … [6,7) bits. */
export const ID_BUCKETS = [1, 2, 3, 4, 5, 6];

export function mouseFigures(log: readonly Recorded[]): Figures {
  const segs = segments(log).filter((s) => s.mark.label !== 'warmup' && s.mark.d !== undefined);
  const movements = segs.map(movementOf).filter((m): m is Movement => m !== null);
  const f: Figures = {};
  const m500 = movements.filter((m) => m.d === 500 && m.w === 20).map((m) => m.mtMs / 1000);
  f.mt_500 = fig(mean(m500), `n=${m500.length}, median ${median(m500).toFixed(2)} s`);
  const ids = movements.map((m) => fittsId(m.d, m.w));
  const fit = linearFit(
    ids,
    movements.map((m) => m.mtMs),
  );
  f.fitts_slope = fig(
    fit.slope,
    `MT ≈ ${fit.intercept.toFixed(0)} + ${fit.slope.toFixed(0)}·ID ms`,
  );
  f.fitts_r = fig(fit.r, `n=${movements.length}`);
  for (const b of ID_BUCKETS) {
    const mts = movements.filter((_, i) => Math.floor(ids[i] as number) === b);
    f[`mt_id${b}`] = fig(mean(mts.map((m) => m.mtMs / 1000)), `n=${mts.length}`);
  }
  const shapes = movements
    .filter((m) => m.d >= 200)
    .map(shapeOf)
    .filter((s): s is Shape => s !== null);
  const pos = shapes.map((s) => s.peakPos * 100);
  f.peak_pos = fig(median(pos), `n=${shapes.length} moves ≥ 200 px`);
  f.peak_pos_share = fig(share(pos, (p) => p >= 30 && p <= 60) * 100);
  const ratio = shapes.map((s) => s.peakToMean);
  f.peak_mean = fig(median(ratio));
  f.peak_mean_share = fig(share(ratio, (r) => r >= 1.5 && r <= 2.5) * 100);
  f.single_peak = fig(
    share(shapes, (s) => s.peaks === 1) * 100,
    `peaks per move ${mean(shapes.map((s) => s.peaks)).toFixed(2)}`,
  );
  const gaps = movements.flatMap((m) => diffs(m.moves.map((e) => e.ts)));
  const handlerGaps = movements.flatMap((m) => diffs(m.moves.map((e) => e.t)));
  f.move_dt_mean = fig(mean(gaps), `${gaps.length} intervals`);
  f.move_dt_sd = fig(sd(gaps));
  f.move_dt_cv = fig(
    sd(gaps) / mean(gaps),
    `handler time: mean ${mean(handlerGaps).toFixed(1)} ms, CV ${(sd(handlerGaps) / mean(handlerGaps)).toFixed(2)}`,
  );
  const raw = movements.flatMap((m) => diffs(m.raw));
  const pointerEvents = movements.reduce((a, m) => a + m.pointerEvents, 0);
  const perEvent = movements.reduce((a, m) => a + m.raw.length, 0) / pointerEvents;
  f.raw_dt_mean = fig(mean(raw), `${perEvent.toFixed(2)} raw samples per pointermove`);
  f.raw_dt_cv = fig(sd(raw) / mean(raw), `SD ${sd(raw).toFixed(1)} ms`);
  Object.assign(f, landingFigures(segs), pressFigures(log));
  return f;
}
