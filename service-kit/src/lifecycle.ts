import type http from 'node:http';
import { listen } from './http';
import type { Logger } from './logger';

/** The one line a program that cannot start leaves on stderr. */
const fatalLine = (program: string, message: string): string => `${program}: ${message}\n`;

/** Stops a program before it has a logger (a bad setting): one line on stderr, exit code 2. */
export function fatal(program: string, message: string): never {
  process.stderr.write(fatalLine(program, message));
  process.exit(2);
}

/**
 * Stops a listening server: refuses new connections, lets `drain` finish what is under way
 * (calls in flight), then drops every connection still open (idle keep-alives, WebSockets) so
 * the program's own shutdown is never held by a client.
 */
export async function stopServer(server: http.Server, drain?: () => unknown): Promise<void> {
  server.close();
  await drain?.();
  server.closeAllConnections();
}

/** How a step whose start throws is tried again before start-up gives up on it. */
export interface StepRetry {
  /** How long after the first try a failing start is tried again, in ms. */
  retryForMs: number;
  /** The pause before the second try, in ms (default 500); each later pause doubles it. */
  firstDelayMs?: number;
  /** The longest pause between two tries, in ms (default 10 000). */
  maxDelayMs?: number;
}

export interface LifecycleOptions {
  /** Ends the process with a code (default `process.exit`); tests pass a stand-in. */
  exit?: (code: number) => void;
}

interface Started {
  name: string;
  stop: () => unknown;
}

/** What one try of a step's start came to. */
type Try<T> =
  | { kind: 'started'; value: T }
  | { kind: 'failed'; error: unknown }
  // It ended after shutdown began; what it started, if anything, is stopped already.
  | { kind: 'overtaken' };

/** The promise of a step that will go no further: the program is shutting down. */
const never = (): Promise<never> => new Promise<never>(() => undefined);

const errorText = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/**
 * A program's start-up as an ordered list of steps, and its shutdown as the same list run
 * backwards: what started last stops first, each stop once, a failing stop logged and passed
 * over so the rest still stop. A step that fails to start (after its retries, if it has any)
 * stops what already started, then the program exits with code 2 and the step's reason.
 *
 * Shutdown may begin at any time, during start-up too (`exitOnSignals` before the first step):
 * a step still starting then is waited for, and what it started is stopped as soon as it has.
 */
export class Lifecycle {
  private readonly started: Started[] = [];
  /** Tries of a start under way: shutdown waits for each, and for the stop of what it gives. */
  private readonly starting = new Set<Promise<unknown>>();
  /** Steps pausing before their next try: shutdown ends the pause (and the tries). */
  private readonly pausing = new Set<() => void>();
  private stopping: Promise<void> | null = null;
  private readonly endProcess: (code: number) => void;

  constructor(
    /** The program's name in its fatal line (`persona-browser waker`). */
    private readonly program: string,
    private readonly logger: Logger,
    options: LifecycleOptions = {},
  ) {
    this.endProcess = options.exit ?? ((code) => process.exit(code));
  }

  /**
   * Runs one start-up step; `stop` joins the shutdown list once the step has started. With
   * `retry`, a start that throws is tried again after pauses that double (a warn line each,
   * `attempt` the number of the try that failed, `in_ms` the pause) until `retryForMs` has
   * passed since the first try; then start-up fails as it does at once without `retry`.
   *
   * Once shutdown has begun, the promise returned never settles: start-up goes no further and
   * the caller has nothing to handle, since the program is ending. A start under way then is
   * waited for by the shutdown, which stops what it gives at once; one that throws then is
   * logged, not taken for a start-up failure; no further try is made.
   */
  async step<T>(
    name: string,
    start: () => T | Promise<T>,
    stop?: (value: T) => unknown,
    retry?: StepRetry,
  ): Promise<T> {
    const firstTry = Date.now();
    for (let attempt = 1; !this.stopping; attempt += 1) {
      const tried = await this.track(this.tryStart(name, start, stop));
      if (tried.kind === 'started') return tried.value;
      if (tried.kind === 'overtaken') break;
      const error = errorText(tried.error);
      const left = retry ? retry.retryForMs - (Date.now() - firstTry) : 0;
      if (!retry || left <= 0) return this.fail(error);
      const doubled = (retry.firstDelayMs ?? 500) * 2 ** (attempt - 1);
      const inMs = Math.min(doubled, retry.maxDelayMs ?? 10_000, left);
      this.logger.warn('start step failed, retrying', { step: name, attempt, in_ms: inMs, error });
      await this.pause(inMs);
    }
    return never();
  }

  /** Listens as a start-up step; its stop is `stopServer`. */
  listen(server: http.Server, port: number, host?: string, drain?: () => unknown): Promise<void> {
    return this.step(
      'http',
      () => listen(server, port, host),
      () => stopServer(server, drain),
    );
  }

  /** Adds a stop for something started outside `step` (a listener created synchronously). */
  onStop(name: string, stop: () => unknown): void {
    this.started.push({ name, stop });
  }

  /** Whether shutdown has begun (new work should be refused). */
  get shuttingDown(): boolean {
    return this.stopping !== null;
  }

  /**
   * Stops every started step in reverse order, and what a step still starting gives once it
   * has; later calls wait for the first one.
   */
  shutdown(reason: string): Promise<void> {
    if (!this.stopping) {
      this.stopping = this.stopAll(reason);
      for (const wake of this.pausing) wake();
    }
    return this.stopping;
  }

  /** Shuts down, then ends the process with `code`. */
  async exit(reason: string, code = 0): Promise<never> {
    await this.shutdown(reason);
    this.logger.info('stopped', { reason });
    this.endProcess(code);
    return never();
  }

  /** A start-up failure after some steps ran: they stop, then exit code 2 with the reason. */
  async fail(message: string): Promise<never> {
    this.logger.error('cannot start', { error: message });
    await this.shutdown('start-up failed');
    process.stderr.write(fatalLine(this.program, message));
    this.endProcess(2);
    return never();
  }

  /**
   * Shuts down and exits 0 on each of these signals. Called before the first step, a signal
   * during start-up stops what started and what is still starting.
   */
  exitOnSignals(signals: readonly NodeJS.Signals[] = ['SIGTERM', 'SIGINT']): void {
    for (const signal of signals) process.on(signal, () => void this.exit(signal));
  }

  /** One try of a start; what it gives after shutdown began is stopped before it resolves. */
  private async tryStart<T>(
    name: string,
    start: () => T | Promise<T>,
    stop: ((value: T) => unknown) | undefined,
  ): Promise<Try<T>> {
    let value: T;
    try {
      value = await start();
    } catch (error) {
      if (!this.stopping) return { kind: 'failed', error };
      this.logger.info('start step ended during shutdown', { step: name, error: errorText(error) });
      return { kind: 'overtaken' };
    }
    if (!this.stopping) {
      if (stop) this.started.push({ name, stop: () => stop(value) });
      return { kind: 'started', value };
    }
    if (stop) {
      this.logger.info('stopping a step that started during shutdown', { step: name });
      await this.stopOne(name, () => stop(value));
    }
    return { kind: 'overtaken' };
  }

  /** Keeps a try in `starting` while it is under way. */
  private async track<T>(tried: Promise<T>): Promise<T> {
    this.starting.add(tried);
    try {
      return await tried;
    } finally {
      this.starting.delete(tried);
    }
  }

  /** Waits `ms`, or less if shutdown begins meanwhile. */
  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.pausing.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.pausing.add(done);
    });
  }

  private async stopOne(name: string, stop: () => unknown): Promise<void> {
    try {
      await stop();
    } catch (err) {
      this.logger.error('stop failed', { step: name, err });
    }
  }

  private async stopAll(reason: string): Promise<void> {
    this.logger.info('shutting down', { reason });
    for (const { name, stop } of this.started.splice(0).reverse()) await this.stopOne(name, stop);
    // A try that ends from now on stops what it started itself (tryStart); its promise settles
    // once that stop is done. Tries that ended before this line did so already.
    await Promise.all(this.starting);
  }
}
