/** Sample statistics the human-likeness figures need beyond bench/stats.ts. */

/** One computed figure: a value (null when there was nothing to measure) and a short note. */
export interface Figure {
  value: number | null;
  detail?: string;
}

export type Figures = Record<string, Figure>;

export const fig = (value: number, detail?: string): Figure => ({
  value: Number.isFinite(value) ? value : null,
  ...(detail ? { detail } : {}),
});

export const mean = (xs: readonly number[]): number =>
  xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : Number.NaN;

/** Sample standard deviation (n − 1). */
export function sd(xs: readonly number[]): number {
  if (xs.length < 2) return Number.NaN;
  const m = mean(xs);
  return Math.sqrt(xs.reduce((a, x) => a + (x - m) ** 2, 0) / (xs.length - 1));
}

/** Share (0–1) of the sample for which `pred` holds. */
export const share = <T>(xs: readonly T[], pred: (x: T) => boolean): number =>
  xs.length ? xs.filter(pred).length / xs.length : Number.NaN;

/** Least-squares line y = a + b·x and Pearson's r. */
export function linearFit(
  xs: readonly number[],
  ys: readonly number[],
): { intercept: number; slope: number; r: number } {
  const n = Math.min(xs.length, ys.length);
  if (n < 3) return { intercept: Number.NaN, slope: Number.NaN, r: Number.NaN };
  const mx = mean(xs.slice(0, n));
  const my = mean(ys.slice(0, n));
  let sxy = 0;
  let sxx = 0;
  let syy = 0;
  for (let i = 0; i < n; i++) {
    const dx = (xs[i] as number) - mx;
    const dy = (ys[i] as number) - my;
    sxy += dx * dy;
    sxx += dx * dx;
    syy += dy * dy;
  }
  const slope = sxy / sxx;
  return { intercept: my - slope * mx, slope, r: sxy / Math.sqrt(sxx * syy) };
}

/** Sample skewness: about 0 for a symmetric sample, clearly positive for a log-normal one. */
export function skewness(xs: readonly number[]): number {
  if (xs.length < 3) return Number.NaN;
  const m = mean(xs);
  const s = sd(xs);
  return xs.reduce((a, x) => a + ((x - m) / s) ** 3, 0) / xs.length;
}

/** Consecutive differences. */
export const diffs = (xs: readonly number[]): number[] =>
  xs.slice(1).map((x, i) => x - (xs[i] as number));
