import http from 'node:http';
import type { CommitInfo, PersonaInfo, PersonaState } from '@persona-browser/contracts';
import type { Logger } from '@persona-browser/service-kit';
import { errorMessage } from '@persona-browser/service-kit';
import { Activity } from './activity';
import type { Address, ExitInfo, InstanceHandle } from './drivers/types';
import type { ProxyStatus } from './identity';
import { RestartBackoff } from './persona-backoff';
import { PersonaIdentity } from './persona-identity';
import type { PersonaOptions } from './persona-options';
import { PersonaLifecycle } from './persona-lifecycle';
import { WorkerPings } from './persona-pings';
import type { PersonaEvent } from './persona-lifecycle';
import type { PersonaSpec } from './personas';
import { recordNode } from './personas';
import { isReady } from './worker-client';

/** A start that did not succeed; `fatal` ones (a port conflict) are never retried. */
export class WakeError extends Error {}

/** A wake that failed because no proxy identity could be made (the proxy, or the GeoIP). */
export class IdentityWakeError extends WakeError {}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** The worker a persona runs right now. */
interface Worker {
  handle: InstanceHandle;
  /** Paused by the idle timer (the persona shows as sleeping). */
  paused: boolean;
  pausedAt: number;
  /** When it last came up (the back-off resets once it stays up). */
  upSince: number;
}

/**
 * One persona: the single owner of its worker and its activity. Its state changes only through
 * the lifecycle's transition table; its proxy identity and its crash-loop back-off sit beside
 * it. Every change runs through `serial`, so a wake, an idle sleep and an API restart never
 * interleave.
 */
export class Persona {
  private readonly lifecycle: PersonaLifecycle;
  private readonly identity: PersonaIdentity;
  private readonly backoff = new RestartBackoff();
  commit: CommitInfo | null = null;
  private worker: Worker | null = null;
  /** A configuration error (port conflict): this persona never starts. */
  private fatal = false;
  /** The waker is shutting down: nothing starts any more. */
  private closed = false;
  private queue: Promise<unknown> = Promise.resolve();
  /** Counted by the front door. */
  readonly activity = new Activity();
  private healthFails = 0;
  private exitDuringStart: ExitInfo | null = null;
  /** Keep-alive connections to the current worker; replaced with each instance. */
  private ownAgent = new http.Agent({ keepAlive: true });
  private readonly pings = new WorkerPings();

  constructor(
    readonly spec: PersonaSpec,
    private readonly opts: PersonaOptions,
  ) {
    this.lifecycle = new PersonaLifecycle(
      spec.mode === 'always-on' ? 'waking' : 'sleeping',
      (state, error) => this.log.info('persona state', { state, ...(error ? { error } : {}) }),
    );
    this.identity = new PersonaIdentity(spec, opts.identity, () => this.log);
  }

  get name(): string {
    return this.spec.name;
  }

  get state(): PersonaState {
    return this.lifecycle.state;
  }

  get since(): Date {
    return this.lifecycle.since;
  }

  get error(): string | null {
    return this.lifecycle.error;
  }

  /**
   * The connections to the worker: the driver's own where its address needs one (a tunnel
   * into a cluster's overlay), else the persona's keep-alive agent.
   */
  get agent(): http.Agent {
    return this.worker?.handle.address.agent ?? this.ownAgent;
  }

  /** The node that holds the persona in a cluster, else null. */
  get node(): string | null {
    return this.worker?.handle.node ?? this.spec.node ?? null;
  }

  /** Why the persona's node cannot serve it now ("node w2 is down"), else null. */
  nodeProblem(): string | null {
    const node = this.node;
    return node ? (this.opts.driver.nodeProblem?.(node) ?? null) : null;
  }

  private get log(): Logger {
    return this.opts.logger.child({ persona: this.name });
  }

  private apply(event: PersonaEvent, error?: string | null): void {
    this.lifecycle.apply(event, error);
  }

  /** Runs state changes one after another. */
  private serial<T>(work: () => Promise<T>): Promise<T> {
    const next = this.queue.then(work, work);
    this.queue = next.catch(() => undefined);
    return next;
  }

  info(now = Date.now()): PersonaInfo {
    return {
      name: this.name,
      port: this.spec.port,
      mode: this.spec.mode,
      state: this.state,
      since: this.since.toISOString(),
      commit: this.commit,
      idle_seconds: this.activity.idleSeconds(now),
      last_request: this.activity.lastRequestIso(),
      error: this.nodeProblem() ?? this.error,
      proxy: this.proxyStatus(),
      node: this.node,
    };
  }

  /** The persona's proxy for the API: never a credential. Null without PROXY_COUNTRY. */
  proxyStatus(): ProxyStatus | null {
    return this.identity.status();
  }

  /** The host pid of the worker's process tree root; null while down. */
  pid(): number | null {
    return this.worker?.handle.pid ?? null;
  }

  isPaused(): boolean {
    return this.worker?.paused ?? false;
  }

  // --- life cycle ----------------------------------------------------------------------------

  /** Marks a configuration error: the persona stays crashed and is never started. */
  markFatal(error: string): void {
    this.fatal = true;
    this.apply('misconfigured', error);
  }

  /** Where the worker answers right now, or null while it is not running (the fast path). */
  runningAddress(): Address | null {
    const worker = this.worker;
    return this.state === 'running' && worker && !worker.paused ? worker.handle.address : null;
  }

  /** Where the worker answers, waking it first if needed (what a client request waits for). */
  async ensureRunning(): Promise<Address> {
    const now = this.runningAddress();
    if (now) return now;
    await this.wake();
    if (!this.worker) throw new WakeError(`persona ${this.name} is not running`);
    return this.worker.handle.address;
  }

  wake(): Promise<void> {
    return this.serial(() => this.doWake());
  }

  private async doWake(): Promise<void> {
    if (this.fatal) throw new WakeError(this.error ?? `persona ${this.name} cannot start`);
    if (this.closed) throw new WakeError('the waker is shutting down');
    this.backoff.cancel();
    if (this.worker?.paused) {
      await this.opts.driver.unpause?.(this.worker.handle);
      this.worker.paused = false;
      this.activity.touch();
      this.apply('resume', null);
      return;
    }
    if (this.worker && this.state === 'running') return;
    this.apply('wake');
    this.exitDuringStart = null;
    // Connections kept alive to an earlier instance lead nowhere now.
    this.renewAgent();
    try {
      await this.identity.renew();
    } catch (err) {
      const message = errorMessage(err);
      this.backoff.failed();
      this.apply('fail', message);
      throw new IdentityWakeError(`persona ${this.name} did not start: ${message}`);
    }
    let handle: InstanceHandle | null = null;
    try {
      handle = await this.opts.driver.start({
        name: this.name,
        personaDir: this.spec.dir,
        env: this.opts.workerEnv,
        memoryLimitMb: this.spec.memoryLimitMb,
        cpus: this.spec.cpus,
        node: this.spec.node ?? null,
      });
      this.worker = { handle, paused: false, pausedAt: 0, upSince: 0 };
      if (handle.node && handle.node !== this.spec.node) this.placedOn(handle.node);
      await this.waitReady(handle);
    } catch (err) {
      const message = errorMessage(err);
      if (handle) {
        this.worker = null;
        await this.opts.driver.stop(handle).catch(() => undefined);
      }
      this.backoff.failed();
      this.apply('fail', `start failed: ${message}`);
      if (this.spec.mode === 'always-on') this.scheduleRestart();
      throw new WakeError(`persona ${this.name} did not start: ${message}`);
    }
    this.worker.upSince = Date.now();
    this.healthFails = 0;
    this.activity.touch();
    this.apply('ready', null);
    this.readCommit(handle);
  }

  private async waitReady(handle: InstanceHandle): Promise<void> {
    const until = Date.now() + this.opts.readyTimeoutMs;
    while (Date.now() < until) {
      if (this.exitDuringStart) throw new Error(`worker ${this.exitDuringStart.reason}`);
      if (this.closed) throw new Error('the waker is shutting down');
      const ready = await isReady(handle.address, 2_000).catch(() => false);
      if (ready) return;
      await sleep(50);
    }
    throw new Error(`worker not ready within ${Math.round(this.opts.readyTimeoutMs / 1000)} s`);
  }

  private readCommit(handle: InstanceHandle): void {
    this.pings.send(
      handle.address,
      (ping) => {
        if (this.worker?.handle !== handle) return;
        this.commit = ping.commit;
        this.identity.record(ping.proxy_errors);
      },
      (err) => this.log.warn('ping failed', { error: errorMessage(err) }),
    );
  }

  /**
   * Reads `proxy_errors` from the worker's ping (with the health checks): nothing else pings a
   * running worker. One ping at a time; a failed one keeps the last reading.
   */
  private readProxyErrors(handle: InstanceHandle): void {
    if (this.pings.busy || !this.identity.used) return;
    const stillRunning = (): boolean => this.worker?.handle === handle && this.state === 'running';
    this.pings.send(
      handle.address,
      (ping) => {
        if (stillRunning() && this.identity.record(ping.proxy_errors))
          this.log.warn('proxy failing', { proxy_errors: ping.proxy_errors });
      },
      () => undefined,
      this.opts.healthTimeoutMs + 3_000,
    );
  }

  /** Stops the worker (an API call, or idle); the persona sleeps until a request or a wake. */
  sleep(): Promise<void> {
    return this.serial(() => this.doStop());
  }

  /** Stops the worker if there is one; the persona then sleeps (a fatal one stays crashed). */
  private async doStop(): Promise<void> {
    this.backoff.cancel();
    const worker = this.worker;
    if (worker) {
      this.apply('stop');
      try {
        await this.opts.driver.stop(worker.handle);
      } finally {
        this.workerGone();
        this.renewAgent();
      }
      if (!this.fatal) this.apply('stopped', null);
    } else if (!this.fatal) this.apply('sleep', null);
  }

  /** The worker is no more: what was read from it goes too. */
  private workerGone(): void {
    this.worker = null;
    this.commit = null;
    this.identity.workerGone();
  }

  restart(): Promise<void> {
    if (this.fatal) return Promise.reject(new WakeError(this.error ?? 'cannot start'));
    return this.serial(async () => {
      await this.doStop();
      await this.doWake();
    });
  }

  /** Takes over a worker an earlier waker left running (found by labels). */
  adopt(handle: InstanceHandle, paused: boolean): void {
    const now = Date.now();
    this.worker = { handle, paused, pausedAt: now, upSince: now };
    this.activity.touch();
    // The identity the adopted worker wears is the one in its folder.
    this.identity.adopt();
    this.apply(paused ? 'adopt-paused' : 'adopt', null);
    if (!paused) this.readCommit(handle);
  }

  /** The driver's notice that this persona's worker ended without being asked to. */
  onExit(handle: InstanceHandle, info: ExitInfo): void {
    if (this.worker?.handle.id !== handle.id) return;
    if (this.state === 'waking') {
      this.exitDuringStart = info;
      return;
    }
    // A stop under way ends the worker itself, and says what comes next.
    if (this.state === 'stopping') return;
    this.workerGone();
    this.log.warn('worker ended', { reason: info.reason });
    if (this.closed) return;
    if (this.spec.mode === 'always-on') {
      this.backoff.failed();
      this.apply('fail', `worker died: ${info.reason}`);
      this.scheduleRestart();
    } else {
      // A sleepy persona sleeps; its next request wakes it.
      this.apply('exit', `worker died: ${info.reason}`);
    }
  }

  private scheduleRestart(): void {
    if (this.closed || this.fatal) return;
    const delay = this.backoff.schedule(() => {
      this.wake().catch((err: unknown) =>
        this.log.error('restart failed', { error: errorMessage(err) }),
      );
    });
    if (delay !== null) {
      this.log.info('restart scheduled', { in_ms: delay, failures: this.backoff.failures });
    }
  }

  /**
   * The fleet's periodic look: idle sleep (or pause, then stop), health checks and the reset of
   * the crash-loop back-off. `checkHealth` is set on every few ticks.
   */
  async tick(checkHealth: boolean, now = Date.now()): Promise<void> {
    const worker = this.worker;
    if (this.closed || !worker) return;
    const busy = this.activity.busy();
    if (this.state === 'running') this.backoff.settle(worker.upSince, now);
    if (this.spec.mode === 'sleepy' && !busy && this.state === 'running' && !worker.paused) {
      if (this.activity.idleMs(now) >= (this.spec.idleTimeoutS ?? Infinity) * 1000) {
        await this.serial(() => this.sleepIfIdle()).catch((err: unknown) =>
          this.log.error('sleep failed', { error: errorMessage(err) }),
        );
        return;
      }
    }
    if (worker.paused && !busy && now - worker.pausedAt >= this.opts.pauseSeconds * 1000) {
      await this.serial(() => this.doStop()).catch(() => undefined);
      return;
    }
    if (checkHealth && this.state === 'running' && !worker.paused) {
      const handle = worker.handle;
      this.readProxyErrors(handle);
      const ok = await isReady(handle.address, this.opts.healthTimeoutMs).catch(() => false);
      if (ok || this.worker?.handle !== handle || this.state !== 'running') {
        this.healthFails = 0;
        return;
      }
      this.healthFails += 1;
      this.log.warn('health check failed', { failures: this.healthFails });
      if (this.healthFails >= this.opts.healthFailures) {
        this.healthFails = 0;
        this.backoff.failed();
        await this.restart().catch((err: unknown) =>
          this.log.error('restart failed', { error: errorMessage(err) }),
        );
      }
    }
  }

  /** Re-checked inside the queue: a request may have arrived since the tick looked. */
  private async sleepIfIdle(): Promise<void> {
    const worker = this.worker;
    if (this.activity.busy() || this.state !== 'running' || !worker || worker.paused) return;
    if (this.activity.idleMs() < (this.spec.idleTimeoutS ?? Infinity) * 1000) return;
    if (this.opts.pauseSeconds > 0 && this.opts.driver.canPause && this.opts.driver.pause) {
      await this.opts.driver.pause(worker.handle);
      worker.paused = true;
      worker.pausedAt = Date.now();
      this.apply('pause', null);
      return;
    }
    await this.doStop();
  }

  /** Stops the worker for good (waker shutdown). */
  shutdown(): Promise<void> {
    this.closed = true;
    this.backoff.cancel();
    return this.serial(() => this.doStop()).finally(() => this.ownAgent.destroy());
  }

  private renewAgent(): void {
    this.ownAgent.destroy();
    this.ownAgent = new http.Agent({ keepAlive: true });
  }

  /** The driver placed a new persona: persona.env records the node, which holds its folder. */
  private placedOn(node: string): void {
    this.spec.node = node;
    try {
      recordNode(this.spec.dir, node);
      this.log.info('persona placed', { node });
    } catch (err) {
      this.log.error('cannot record NODE in persona.env', { node, error: errorMessage(err) });
    }
  }
}
