/**
 * The target sequence both drivers follow: the same seeded list of target centres and widths,
 * each at a nominal distance D from the previous centre. Forty 500 px moves to 20 px targets,
 * then a Fitts grid of distances × widths (ID 1.8–6.3 bits), shuffled.
 */

import { seeded } from '@persona-browser/testkit/seeded';

export type TrialKind = 'hover' | 'click-position' | 'click-element';

export interface Trial {
  label: string;
  x: number;
  y: number;
  /** Nominal distance from the previous target centre and target width, CSS px. */
  d: number;
  w: number;
  kind: TrialKind;
}

export interface Viewport {
  width: number;
  height: number;
}

export const FITTS_DISTANCES = [100, 200, 400, 800];
export const FITTS_WIDTHS = [10, 20, 40];
/** Targets keep this far from the viewport's edges (the text input sits in the top band). */
const MARGIN = 90;
const KINDS: TrialKind[] = ['hover', 'click-position', 'click-element'];

/** Fitts's index of difficulty, Shannon form. */
export const fittsId = (d: number, w: number): number => Math.log2(d / w + 1);

/** A point at distance `d` from `from` inside the margins: random angles first, then a sweep. */
function pointAt(
  from: { x: number; y: number },
  d: number,
  vp: Viewport,
  rnd: () => number,
): { x: number; y: number } {
  const inside = (p: { x: number; y: number }): boolean =>
    p.x >= MARGIN && p.x <= vp.width - MARGIN && p.y >= MARGIN && p.y <= vp.height - MARGIN;
  const at = (a: number): { x: number; y: number } => ({
    x: Math.round(from.x + d * Math.cos(a)),
    y: Math.round(from.y + d * Math.sin(a)),
  });
  for (let i = 0; i < 200; i++) {
    const p = at(rnd() * 2 * Math.PI);
    if (inside(p)) return p;
  }
  const start = rnd() * 2 * Math.PI;
  for (let deg = 0; deg < 360; deg++) {
    const p = at(start + (deg * Math.PI) / 180);
    if (inside(p)) return p;
  }
  throw new Error(
    `no point ${d} px from (${from.x}, ${from.y}) fits a ${vp.width}×${vp.height} viewport`,
  );
}

/**
 * The warm-up target (index 0, not measured) sits at the viewport centre; every later target is
 * `d` px from the previous one. Trial kinds rotate hover → click-position → click-element.
 */
export function planTrials(vp: Viewport, moves500: number, fittsReps: number, seed = 7): Trial[] {
  const rnd = seeded(seed);
  const grid: { d: number; w: number }[] = [];
  for (let r = 0; r < fittsReps; r++) {
    for (const d of FITTS_DISTANCES) for (const w of FITTS_WIDTHS) grid.push({ d, w });
  }
  for (let i = grid.length - 1; i > 0; i--) {
    const j = Math.floor(rnd() * (i + 1));
    [grid[i], grid[j]] = [grid[j] as { d: number; w: number }, grid[i] as { d: number; w: number }];
  }
  const conditions = [
    ...Array.from({ length: moves500 }, () => ({ d: 500, w: 20, set: '500' })),
    ...grid.map((c) => ({ ...c, set: 'fitts' })),
  ];
  let prev = { x: Math.round(vp.width / 2), y: Math.round(vp.height / 2) };
  const trials: Trial[] = [{ label: 'warmup', ...prev, d: 0, w: 20, kind: 'hover' }];
  conditions.forEach((c, i) => {
    prev = pointAt(prev, c.d, vp, rnd);
    const kind = KINDS[i % KINDS.length] as TrialKind;
    trials.push({ label: `${c.set}-${i}`, ...prev, d: c.d, w: c.w, kind });
  });
  return trials;
}
