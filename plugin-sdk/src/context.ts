import type { PageGestures } from './gestures';

/**
 * The bounds of one call. Every wait a plugin makes goes through `sleep` or is raced against
 * `signal`, so the call stops cleanly at its deadline and the page is handed back usable.
 */
export interface CallScope {
  /** Fires when the call must stop: its deadline passed, the page got stuck or closed. */
  readonly signal: AbortSignal;
  /** Epoch milliseconds by which the call must have answered. */
  readonly deadline: number;
  /** Milliseconds left before the deadline (never negative). */
  remainingMs(): number;
  /** Waits `ms`, or rejects as soon as `signal` fires. */
  sleep(ms: number): Promise<void>;
  /** Rejects with the reason of `signal` if it has fired. */
  throwIfAborted(): void;
}

export interface PluginLogger {
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

/** What a plugin receives for one call on a page it holds (it never sees express). */
export interface PluginContext extends CallScope {
  readonly pageId: string;
  readonly gestures: PageGestures;
  readonly log: PluginLogger;
  /** A random source in [0, 1) for the probability parameters (seeded under test). */
  random(): number;
  /** A setting or secret from the worker's environment. */
  setting(name: string): string | undefined;
}
