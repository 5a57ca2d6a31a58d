/** Small statistics helpers for the benchmark: medians and nearest-rank percentiles. */

export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1] as number;
}

export const median = (values: readonly number[]): number => {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
};

export const min = (values: readonly number[]): number => Math.min(...values);
export const max = (values: readonly number[]): number => Math.max(...values);

/** `a–b` range of a sample, for the detail column. */
export function range(values: readonly number[], digits = 0): string {
  return values.length ? `${min(values).toFixed(digits)}–${max(values).toFixed(digits)}` : '';
}

export const sleep = (ms: number): Promise<void> =>
  new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
