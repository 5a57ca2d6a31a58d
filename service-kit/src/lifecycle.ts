import type http from 'node:http';
import { listen } from './http';
import type { Logger } from './logger';

/** Stops a program before it has a logger (a bad setting): one line on stderr, exit code 2. */
export function fatal(program: string, message: string): never {
  process.stderr.write(`${program}: ${message}\n`);
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

interface Started {
  name: string;
  stop: () => unknown;
}

/**
 * A program's start-up as an ordered list of steps, and its shutdown as the same list run
 * backwards: what started last stops first, each stop once, a failing stop logged and passed
 * over so the rest still stop. A step that fails to start stops what already started, then
 * the program exits with code 2 and the step's reason.
 */
export class Lifecycle {
  private readonly started: Started[] = [];
  private stopping: Promise<void> | null = null;

  constructor(
    /** The program's name in its fatal line (`persona-browser waker`). */
    private readonly program: string,
    private readonly logger: Logger,
  ) {}

  /** Runs one start-up step; `stop` joins the shutdown list once the step has started. */
  async step<T>(
    name: string,
    start: () => T | Promise<T>,
    stop?: (value: T) => unknown,
  ): Promise<T> {
    if (this.stopping) throw new Error(`${name}: not started, the program is shutting down`);
    let value: T;
    try {
      value = await start();
    } catch (err) {
      return this.fail(err instanceof Error ? err.message : String(err));
    }
    if (stop) this.started.push({ name, stop: () => stop(value) });
    return value;
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

  /** Stops every started step in reverse order; later calls wait for the first one. */
  shutdown(reason: string): Promise<void> {
    this.stopping ??= this.stopAll(reason);
    return this.stopping;
  }

  /** Shuts down, then ends the process with `code`. */
  async exit(reason: string, code = 0): Promise<never> {
    await this.shutdown(reason);
    this.logger.info('stopped', { reason });
    process.exit(code);
  }

  /** A start-up failure after some steps ran: they stop, then exit code 2 with the reason. */
  async fail(message: string): Promise<never> {
    this.logger.error('cannot start', { error: message });
    await this.shutdown('start-up failed');
    return fatal(this.program, message);
  }

  /** Shuts down and exits 0 on each of these signals. */
  exitOnSignals(signals: readonly NodeJS.Signals[] = ['SIGTERM', 'SIGINT']): void {
    for (const signal of signals) process.on(signal, () => void this.exit(signal));
  }

  private async stopAll(reason: string): Promise<void> {
    this.logger.info('shutting down', { reason });
    for (const { name, stop } of this.started.splice(0).reverse()) {
      try {
        await stop();
      } catch (err) {
        this.logger.error('stop failed', { step: name, err });
      }
    }
  }
}
