/**
 * What a mouse wheel can do: turn by whole notches. A notch moves 80–120 px (docs/api.md,
 * Primitives: scroll-page), so a burst can total 0, one notch (80–120 px), or two or more
 * (160 px and up); no total between 1 and 79 px or between 121 and 159 px is possible without
 * a partial notch, which no wheel has.
 */
import type { Rng } from './types';
import { uniform } from './random';
import { at } from '../util';

export const NOTCH_MIN = 80;
export const NOTCH_MAX = 120;

/** Totals whole notches can make (besides 0): one notch, or any number of two or more. */
const REACHABLE: ReadonlyArray<readonly [number, number]> = [
  [NOTCH_MIN, NOTCH_MAX],
  [2 * NOTCH_MIN, Number.POSITIVE_INFINITY],
];

/** Products like 1.1 × 100 land a hair off in binary; whole-pixel bounds ignore that hair. */
const HAIR = 1e-9;
export const ceilPx = (x: number): number => Math.ceil(x - HAIR);
export const floorPx = (x: number): number => Math.floor(x + HAIR);

/** Whether `total` whole px can be turned in notches of 80–120 px. */
export function isWholeNotchTotal(total: number): boolean {
  return total === 0 || REACHABLE.some(([lo, hi]) => total >= lo && total <= hi);
}

/**
 * The whole-notch total (a positive whole number of px) nearest `aim` among those inside
 * [lo, hi]; when no such total lies in [lo, hi], the one nearest `aim` overall.
 */
export function wholeNotchTotal(aim: number, lo: number, hi: number): number {
  const clampInto = (from: number, to: number): number =>
    Math.min(Math.max(Math.round(aim), from), to);
  const closer = (best: number, other: number): number =>
    Math.abs(other - aim) < Math.abs(best - aim) ? other : best;
  const nearest = (bounds: ReadonlyArray<readonly [number, number]>): number | null => {
    let best: number | null = null;
    for (const [a, b] of bounds) {
      const from = ceilPx(a);
      const to = floorPx(b);
      if (from > to) continue;
      const candidate = clampInto(from, to);
      best = best === null ? candidate : closer(best, candidate);
    }
    return best;
  };
  const inside = REACHABLE.map(([a, b]) => [Math.max(a, lo), Math.min(b, hi)] as const);
  // Outside [lo, hi]: one notch or two and more, whichever comes nearer (both always exist).
  return (
    nearest(inside) ?? closer(clampInto(NOTCH_MIN, NOTCH_MAX), clampInto(2 * NOTCH_MIN, Infinity))
  );
}

/**
 * Splits a whole-notch total into notches of 80–120 whole px that add up to it exactly. The
 * count puts the mean notch near a size drawn around 100 px; the sizes then vary at random
 * across the band, as a finger's flicks do.
 */
export function notchSizes(total: number, rng: Rng): number[] {
  if (!isWholeNotchTotal(total) || !Number.isInteger(total)) {
    throw new RangeError(`${total} px is not a whole number of wheel notches`);
  }
  if (total === 0) return [];
  const fewest = Math.ceil(total / NOTCH_MAX);
  const most = Math.floor(total / NOTCH_MIN);
  const count = Math.min(Math.max(Math.round(total / uniform(rng, 90, 110)), fewest), most);
  const sizes = Array.from({ length: count }, () =>
    Math.floor(uniform(rng, NOTCH_MIN, NOTCH_MAX + 1)),
  );
  let left = total - sizes.reduce((a, b) => a + b, 0);
  // Spread what is missing (or too much) over the notches, each kept inside the band. Every
  // pass moves at least one px while any notch has room, and `count` guarantees room.
  while (left !== 0) {
    const dir = Math.sign(left);
    const start = Math.floor(rng.next() * count);
    for (let k = 0; k < count && left !== 0; k++) {
      const i = (start + k) % count;
      const size = at(sizes, i);
      const room = dir > 0 ? NOTCH_MAX - size : size - NOTCH_MIN;
      if (room === 0) continue;
      const step = Math.min(Math.abs(left), 1 + Math.floor(rng.next() * room));
      sizes[i] = size + dir * step;
      left -= dir * step;
    }
  }
  return sizes;
}
