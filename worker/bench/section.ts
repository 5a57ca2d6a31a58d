import type { Fixture } from './fixture';

/** What every benchmark section shares: a row format and a run function. */

export interface Target {
  /** The goal, e.g. `≤ 2000 ms`. */
  text: string;
  met(value: number): boolean;
}

export interface Row {
  /** Stable name for the JSON summary, e.g. `startup.initialized_ms`. */
  key: string;
  label: string;
  value: number | null;
  unit: 'ms' | 'µs' | 'MB' | 'x' | 's' | 'req/s' | '';
  digits?: number;
  target?: Target;
  /** Spread, sample sizes, anything that helps read the figure. */
  detail?: string;
}

export interface BenchContext {
  fixture: Fixture;
  /** Progress line on stderr, so stdout stays the report. */
  progress(message: string): void;
}

export interface BenchSection {
  id: string;
  title: string;
  run(ctx: BenchContext): Promise<Row[]>;
}

/** `≤ limit unit`; a ratio target reads `≤ 1.10×`. */
export const atMost = (limit: number, unit: string): Target => ({
  text: unit === '×' ? `≤ ${limit.toFixed(2)}×` : `≤ ${limit}${unit ? ` ${unit}` : ''}`,
  met: (v) => v <= limit,
});
