import type { ProxyStatus } from '@persona-browser/contracts';

export type { ProxyStatus };
export { proxyStatusSchema } from '@persona-browser/contracts';

/**
 * The worker's `proxy_errors` as read over time: the last reading, and whether it grew since
 * the one before. A new worker (a wake) starts the count again.
 */
export class ProxyErrorReadings {
  private previous: number | null = null;
  private current: number | null = null;

  record(value: number | null): void {
    this.previous = this.current;
    this.current = value;
  }

  /** Forgets the readings: the worker is down, or a new one counts from zero. */
  reset(): void {
    this.previous = null;
    this.current = null;
  }

  get value(): number | null {
    return this.current;
  }

  get failing(): boolean {
    return this.previous !== null && this.current !== null && this.current > this.previous;
  }
}
