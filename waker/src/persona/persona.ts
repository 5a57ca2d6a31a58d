import type http from 'node:http';
import type { CommitInfo, PersonaInfo, PersonaState, SleepDepth } from '@persona-browser/contracts';
import type { Logger } from '@persona-browser/service-kit';
import { errorMessage } from '@persona-browser/service-kit';
import { Activity } from './activity';
import type { Address, ExitInfo, InstanceHandle, InstanceSpec } from '../drivers/types';
import type { ProxyStatus } from '../identity';
import { RestartBackoff } from './backoff';
import { PersonaIdentity } from './identity';
import type { PersonaOptions } from './options';
import type { WorkerOps } from '../placement/move';
import { personaInfo } from './info';
import { PersonaLifecycle } from './lifecycle';
import { deadline } from './deadline';
import { Leftovers } from './leftovers';
import { PersonaPlacement } from '../placement/persona-placement';
import { WorkerPings } from './pings';
import type { PersonaEvent } from './lifecycle';
import type { PersonaSpec } from './folders';
import { personaWorkerEnv } from './folders';
import { browserDown, browserUp, isReady, waitReady } from '../worker-client';
import type { LadderSettings } from './ladder';
import { ladderStep } from './ladder';

/**
 * A wake (or sleep) that cannot happen now: a 503 that says why and, where the waker tries
 * again by itself or a retry may succeed, when (`Retry-After`).
 */
export class WakeError extends Error {
  constructor(
    message: string,
    readonly retryAfterS: number | null = null,
  ) {
    super(message);
  }
}

/** A stop that failed: the worker may still run, and the waker stops it before any start. */
export class StopError extends WakeError {}

/** How long a driver's start or stop may take before it counts as failed (an engine that hangs). */
export const DRIVER_TIMEOUT_MS = 120_000;

/**
 * What a persona should be, set by the API (wake, sleep, restart), its mode (an always-on one
 * is awake), a request at its port, its idle time and the memory budget. The persona steps its
 * worker toward it; after a failure the back-off tries again until it is reached.
 */
export type Desired = 'awake' | 'asleep';

/** A sleep at a depth this fleet has not (pause on a Swarm): 400. */
export class DepthRefused extends Error {}

/** A wake that failed because no proxy identity could be made (the proxy, or the GeoIP). */
export class IdentityWakeError extends WakeError {}

/** The depths at which a sleeping persona keeps its worker. */
type KeptDepth = Exclude<SleepDepth, 'deep'>;

/** Serving (null), then each depth from the lightest. */
const DEPTH_ORDER: readonly (SleepDepth | null)[] = [null, 'paused', 'light', 'deep'];

/** The worker a persona runs right now. */
interface Worker {
  handle: InstanceHandle;
  /**
   * Kept while the persona sleeps (it shows as sleeping): frozen (`paused`) or with its browser
   * closed (`light`); null while it serves.
   */
  depth: KeptDepth | null;
  /** When it went to that depth. */
  depthSince: number;
  /** When it last came up (the back-off resets once it stays up). */
  upSince: number;
}

/**
 * One persona: the single owner of its worker and its activity. It holds what is wanted of it
 * (`desired`) and steps its worker toward that (`reconcile`), the back-off trying again after a
 * failure. Its state changes only through the lifecycle's transition table; its proxy identity,
 * its leftovers and its back-off sit beside it. Every change runs through `serial`, so a wake,
 * an idle sleep and an API restart never interleave.
 */
export class Persona {
  private readonly lifecycle: PersonaLifecycle;
  private readonly identity: PersonaIdentity;
  private readonly backoff = new RestartBackoff();
  commit: CommitInfo | null = null;
  private worker: Worker | null = null;
  private desired: Desired;
  /** What must be known stopped before any start (a failed stop, a late start). */
  private readonly leftovers = new Leftovers((handle) => this.stopWithin(handle));
  /**
   * Starts that passed their deadline and have not ended: no other start until they end, or
   * until as long again has passed (an engine that never answers lost them).
   */
  private readonly lateStarts = new Set<Promise<unknown>>();
  private lateStartsUntil = 0;
  /** A configuration error (port conflict): this persona never starts. */
  private fatal = false;
  /** The waker is shutting down: nothing starts any more. */
  private closed = false;
  /**
   * Until the workers an earlier waker left are known (taken over or stopped), nothing starts:
   * a start before that could run a second worker on the same profile.
   */
  private holding = true;
  private queue: Promise<unknown> = Promise.resolve();
  /** State changes queued or under way. */
  private pending = 0;
  /** Counted by the front door. */
  readonly activity = new Activity();
  private healthFails = 0;
  /**
   * An always-on persona's worker died and no start has been counted as its restart yet: the
   * start that brings it back counts as one, whether the back-off or a call at its port runs it.
   */
  private restartOwed = false;
  private exitDuringStart: ExitInfo | null = null;
  private readonly placement: PersonaPlacement;
  private readonly pings = new WorkerPings();

  constructor(
    readonly spec: PersonaSpec,
    private readonly opts: PersonaOptions,
  ) {
    this.desired = spec.mode === 'always-on' ? 'awake' : 'asleep';
    this.lifecycle = new PersonaLifecycle(
      spec.mode === 'always-on' ? 'waking' : 'sleeping',
      (state, error) => this.log.info('persona state', { state, ...(error ? { error } : {}) }),
    );
    this.identity = new PersonaIdentity(spec, opts.identity, () => this.log);
    this.placement = new PersonaPlacement(spec, opts.driver, () => this.log);
    opts.counters?.known(spec.name);
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

  /** When the back-off tries again (a start, or the stop of a leftover); null when no try waits. */
  get retryAt(): Date | null {
    const due = this.backoff.dueAt;
    return due === null ? null : new Date(due);
  }

  /** Whether the worker is as wanted: awake and serving, or asleep with nothing left running. */
  private converged(): boolean {
    if (this.fatal) return true;
    if (this.leftovers.count > 0) return false;
    if (this.desired === 'asleep' || this.closed) return !this.leftovers.stopFailed;
    return this.runningAddress() !== null;
  }

  /** The connections to the worker (a tunnel's where the driver's address needs one). */
  get agent(): http.Agent {
    return this.placement.agent(this.worker?.handle ?? null);
  }

  /** The node that holds the persona in a cluster, else null. */
  get node(): string | null {
    return this.placement.node(this.worker?.handle ?? null);
  }

  /** Why the persona's node cannot serve it now ("node w2 is down"), else null. */
  nodeProblem(): string | null {
    return this.placement.problem(this.worker?.handle ?? null);
  }

  /** A connection to the worker failed before any answer: its node may be gone (the driver's word). */
  workerUnreachable(error: NodeJS.ErrnoException): void {
    this.placement.unreachable(this.worker?.handle ?? null, error);
  }

  private get log(): Logger {
    return this.opts.logger.child({ persona: this.name });
  }

  private apply(event: PersonaEvent, error?: string | null): void {
    this.lifecycle.apply(event, error);
  }

  /** Runs state changes one after another. */
  private serial<T>(work: () => Promise<T>): Promise<T> {
    this.pending += 1;
    const next = this.queue.then(work, work).finally(() => (this.pending -= 1));
    this.queue = next.catch(() => undefined);
    return next;
  }

  /** The persona as the API lists it. */
  info(now = Date.now()): PersonaInfo {
    return personaInfo(this, now);
  }

  /** The persona's proxy for the API: never a credential. Null without PROXY_COUNTRY. */
  proxyStatus(): ProxyStatus | null {
    return this.identity.status();
  }

  /** The host pid of the worker's process tree root; null while down. */
  pid(): number | null {
    return this.worker?.handle.pid ?? null;
  }

  /** Asleep with its worker kept (paused, or light): the worker holds memory. */
  keepsWorker(): boolean {
    return (this.worker?.depth ?? null) !== null;
  }

  /** How deep the persona sleeps while `sleeping`, else null. */
  get depth(): SleepDepth | null {
    if (this.state !== 'sleeping') return null;
    return this.worker ? this.worker.depth : 'deep';
  }

  // --- life cycle ----------------------------------------------------------------------------

  /** The earlier waker's workers are known: starts may go on. */
  allowStarts(): void {
    this.holding = false;
  }

  /** Marks a configuration error: the persona stays crashed and is never started. */
  markFatal(error: string): void {
    this.fatal = true;
    this.apply('misconfigured', error);
  }

  /** Where the worker answers right now, or null while it is not running (the fast path). */
  runningAddress(): Address | null {
    const worker = this.worker;
    return this.state === 'running' && worker && worker.depth === null
      ? worker.handle.address
      : null;
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
    return this.serial(() => {
      this.desired = 'awake';
      return this.doWake();
    });
  }

  /** Seconds until the waker tries again, for a refused client. */
  private retryAfterS(): number {
    return this.backoff.retryAfterS();
  }

  private async doWake(): Promise<void> {
    if (this.fatal) throw new WakeError(this.error ?? `persona ${this.name} cannot start`);
    if (this.closed) throw new WakeError('the waker is shutting down');
    if (this.holding) {
      throw new WakeError('the waker is starting: the workers it found are not yet taken over', 2);
    }
    this.backoff.cancel();
    // Never two workers for one profile: what a failed stop left is stopped first.
    try {
      await this.stopLeftovers();
    } catch (err) {
      // A sleepy persona's caller is told to retry; the back-off only finishes the stop.
      if (this.spec.mode !== 'always-on') this.desired = 'asleep';
      throw err;
    }
    const counters = this.opts.counters;
    const started = performance.now();
    const ended = (ok: boolean): void =>
      counters?.wakeEnded(this.name, (performance.now() - started) / 1000, ok);
    if (this.worker?.depth === 'light') {
      // Its browser starts in the worker that stayed; a worker that cannot is replaced.
      if (await this.wakeLight(this.worker, ended)) {
        ended(true);
        return;
      }
      ended(false);
      await this.stopLeftovers();
    }
    if (this.worker?.depth === 'paused') {
      counters?.woke(this.name);
      const paused = this.worker;
      try {
        await deadline(
          this.opts.driver.unpause?.(paused.handle) ?? Promise.resolve(),
          this.driverTimeoutMs,
          'the resume',
          { ended: () => undefined },
        );
      } catch (err) {
        // Neither paused nor running for sure: stopped before the next start, which starts anew.
        this.workerGone();
        this.leftovers.add(paused.handle);
        this.backoff.failed();
        this.apply('fail', `resume failed: ${errorMessage(err)}`);
        ended(false);
        this.wakeFailed();
        throw new WakeError(
          `persona ${this.name} could not be resumed: ${errorMessage(err)}`,
          this.retryAfterS(),
        );
      }
      paused.depth = null;
      await this.opts.workerUp?.(this.name, this.worker.handle);
      this.activity.touch();
      this.apply('resume', null);
      ended(true);
      return;
    }
    if (this.worker && this.state === 'running') return;
    if (this.lateStarts.size > 0 && Date.now() < this.lateStartsUntil) {
      this.wakeFailed();
      throw new WakeError(
        `persona ${this.name}: an earlier start has not ended yet (the engine is slow)`,
        this.retryAfterS(),
      );
    }
    this.apply('wake');
    // Waking already, so a wake planned beside this one counts this one's memory.
    if (this.opts.admit) {
      try {
        await this.opts.admit(this.name);
      } catch (err) {
        const message = errorMessage(err);
        // It sleeps again, and its error says why (the panel shows it); the caller is told.
        this.apply('sleep', message);
        this.wakeFailed();
        throw err instanceof WakeError ? err : new WakeError(message, this.retryAfterS());
      }
    }
    counters?.woke(this.name);
    if (this.restartOwed) this.countRestart();
    this.exitDuringStart = null;
    // Connections kept alive to an earlier instance lead nowhere now.
    this.placement.renewAgent();
    try {
      await this.identity.renew();
    } catch (err) {
      const message = errorMessage(err);
      this.backoff.failed();
      this.apply('fail', message);
      ended(false);
      this.wakeFailed();
      throw new IdentityWakeError(
        `persona ${this.name} did not start: ${message}`,
        this.retryAfterS(),
      );
    }
    const spec: InstanceSpec = {
      name: this.name,
      personaDir: this.spec.dir,
      env: personaWorkerEnv(this.spec.dir, this.opts.workerEnv),
      memoryLimitMb: this.spec.memoryLimitMb,
      cpus: this.spec.cpus,
      node: this.spec.node ?? null,
    };
    // The turn is taken on the node the worker will start on: each node starts its own few.
    const node = await this.startNode(spec, ended);
    let endTurn: () => void;
    try {
      endTurn = await this.startTurn(ended, node);
    } catch (err) {
      this.opts.driver.unplan?.(this.name);
      throw err;
    }
    let handle: InstanceHandle | null = null;
    try {
      const starting = this.opts.driver.start(spec);
      handle = await deadline(starting, this.driverTimeoutMs, 'the start', {
        timedOut: () => {
          this.lateStarts.add(starting);
          this.lateStartsUntil = Date.now() + this.driverTimeoutMs;
        },
        ended: (late) => {
          this.lateStarts.delete(starting);
          if (!late) return;
          // Started after all: it is stopped before anything else starts.
          this.log.warn('a start that passed its deadline started a worker', { id: late.id });
          this.leftovers.add(late);
          this.retryNow();
        },
      });
      this.worker = { handle, depth: null, depthSince: 0, upSince: 0 };
      this.placement.started(handle);
      await waitReady(handle.address, this.opts.readyTimeoutMs, () => {
        if (this.exitDuringStart) return `worker ${this.exitDuringStart.reason}`;
        return this.closed ? 'the waker is shutting down' : null;
      });
      endTurn();
    } catch (err) {
      endTurn();
      const message = errorMessage(err);
      if (handle) {
        this.worker = null;
        // A start that failed half-way may have left it running: known stopped, or kept to stop.
        const started = handle;
        await this.stopWithin(started).catch((stopErr: unknown) => {
          this.log.warn('stop after a failed start failed', { error: errorMessage(stopErr) });
          this.leftovers.add(started);
        });
      }
      this.backoff.failed();
      this.apply('fail', `start failed: ${message}`);
      ended(false);
      this.wakeFailed();
      throw new WakeError(`persona ${this.name} did not start: ${message}`, this.retryAfterS());
    }
    await this.opts.workerUp?.(this.name, handle);
    this.worker.upSince = Date.now();
    this.healthFails = 0;
    this.activity.touch();
    this.apply('ready', null);
    ended(true);
    this.readCommit(handle);
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
   * After a failed wake: an always-on persona (still wanted awake) is tried again by the
   * back-off; a sleepy one sleeps until its next call, whose caller retries (told when), unless
   * a leftover is still to stop.
   */
  private wakeFailed(): void {
    if (this.spec.mode !== 'always-on') this.desired = 'asleep';
    if (!this.converged()) this.scheduleRetry();
  }

  /**
   * Puts the persona to sleep at `depth` (an API call; deep by default: the worker stops). One
   * already sleeping deeper stays as it is; the persona sleeps until a request or a wake.
   */
  sleep(depth: SleepDepth = 'deep'): Promise<void> {
    if (depth === 'paused' && !this.ladder.canPause)
      return Promise.reject(new DepthRefused('this fleet cannot pause a worker (no pause here)'));
    return this.serial(async () => {
      this.desired = 'asleep';
      const worker = this.worker;
      const kept = worker?.depth ?? null;
      const serving = worker !== null && kept === null && this.state === 'running';
      if (depth === 'deep' || (!serving && kept === null)) await this.doStop();
      else if (DEPTH_ORDER.indexOf(kept) < DEPTH_ORDER.indexOf(depth)) await this.goTo(depth);
      if (serving) this.opts.counters?.slept(this.name);
    });
  }

  /**
   * Put to sleep to free memory for another persona's wake: only while it is still idle and
   * running (or paused); false when a request or a live view came in since it was picked.
   */
  sleepForMemory(): Promise<boolean> {
    // Never queued behind other work: a restart queued here may itself wait for the budget's
    // turn, which the caller holds. Busy with a change means not idle, and the budget replans.
    if (this.pending > 0) return Promise.resolve(false);
    return this.serial(async () => {
      const worker = this.worker;
      if (!worker || this.activity.busy()) return false;
      if (this.state !== 'running' && worker.depth === null) return false;
      this.desired = 'asleep';
      await this.doStop();
      this.opts.counters?.slept(this.name);
      return true;
    });
  }

  /**
   * Stops the worker if there is one, and any leftover; the persona then sleeps (a fatal one
   * stays crashed). A stop that fails leaves the persona crashed, its worker kept as a leftover
   * that the back-off stops again: a StopError (503) says when.
   */
  private async doStop(): Promise<void> {
    this.backoff.cancel();
    // Stopped on purpose: its next start is a wake, not the crash's restart.
    this.restartOwed = false;
    const worker = this.worker;
    if (worker) {
      this.apply('stop');
      if (worker.depth !== 'paused' && !this.nodeProblem() && this.opts.beforeStop) {
        await this.opts
          .beforeStop(this.spec.dir, worker.handle)
          .catch((err: unknown) => this.log.warn('before stop', { error: errorMessage(err) }));
      }
      // It serves nothing from now on, whether the stop succeeds or not.
      this.workerGone();
      this.placement.renewAgent();
      this.leftovers.add(worker.handle, true);
    }
    await this.stopLeftovers();
    if (!this.fatal) this.apply(worker ? 'stopped' : 'sleep', null);
  }

  /** The driver's stop, failed once it passes its deadline (it may be tried again). */
  private stopWithin(handle: InstanceHandle): Promise<void> {
    return deadline(this.opts.driver.stop(handle), this.driverTimeoutMs, 'the stop', {
      ended: () => {
        this.log.info('a stop that passed its deadline ended', { id: handle.id });
        this.retryNow();
      },
    });
  }

  private get driverTimeoutMs(): number {
    return this.opts.driverTimeoutMs ?? DRIVER_TIMEOUT_MS;
  }

  /** Stops every leftover, oldest first; the first that fails ends the step (a StopError). */
  private async stopLeftovers(): Promise<void> {
    try {
      await this.leftovers.stopAll();
    } catch (err) {
      const message = errorMessage(err);
      this.backoff.failed();
      if (!this.fatal) this.apply('fail', `stop failed: ${message}`);
      this.scheduleRetry();
      this.log.warn('stop failed', { error: message });
      throw new StopError(
        `persona ${this.name}: its worker could not be stopped (${message}); the waker tries again`,
        this.retryAfterS(),
      );
    }
  }

  /** The worker is no more: what was read from it goes too. */
  private workerGone(): void {
    this.worker = null;
    this.commit = null;
    this.identity.workerGone();
  }

  /**
   * Runs `work` in the persona's queue with its worker stopped (a move); `work` may start and
   * stop it again, and is told whether it ran before.
   */
  whileStopped<T>(work: (ops: WorkerOps, wasRunning: boolean) => Promise<T>): Promise<T> {
    return this.serial(async () => {
      const wasRunning = this.worker !== null;
      await this.doStop();
      return work(
        {
          start: () => {
            this.desired = 'awake';
            return this.doWake();
          },
          stop: () => {
            this.desired = 'asleep';
            return this.doStop();
          },
        },
        wasRunning,
      );
    });
  }

  restart(): Promise<void> {
    if (this.fatal) return Promise.reject(new WakeError(this.error ?? 'cannot start'));
    return this.serial(async () => {
      this.countRestart();
      this.desired = 'awake';
      await this.doStop();
      await this.doWake();
    });
  }

  /**
   * An instance an earlier waker left that could not be removed: stopped before this persona
   * starts, and by the back-off meanwhile.
   */
  leftover(handle: InstanceHandle): void {
    this.leftovers.add(handle);
    this.backoff.failed();
    this.scheduleRetry();
  }

  /** Takes over a worker an earlier waker left running (found by labels). */
  adopt(handle: InstanceHandle, paused: boolean): void {
    const now = Date.now();
    this.worker = { handle, depth: paused ? 'paused' : null, depthSince: now, upSince: now };
    this.activity.touch();
    // The identity the adopted worker wears is the one in its folder.
    this.identity.adopt();
    this.apply(paused ? 'adopt-paused' : 'adopt', null);
    if (!paused) {
      this.readCommit(handle);
      void this.opts.workerUp?.(this.name, handle);
      this.serial(() => this.adoptedLight(handle)).catch(() => undefined);
    }
  }

  /**
   * A worker an earlier waker left in light sleep answers with its browser closed: it is kept
   * in light sleep (an always-on persona's browser is then started by the next reconcile), not
   * restarted by the health checks as a worker that does not come up.
   */
  private async adoptedLight(handle: InstanceHandle): Promise<void> {
    const worker = this.worker;
    if (worker?.handle !== handle || this.state !== 'running') return;
    // Unanswered is not light: the health checks deal with a worker that does not answer.
    const up = await isReady(handle.address, this.opts.healthTimeoutMs).catch(() => true);
    if (up || this.worker !== worker || this.state !== 'running') return;
    worker.depth = 'light';
    worker.depthSince = Date.now();
    if (this.spec.mode !== 'always-on') this.desired = 'asleep';
    this.apply('pause', null);
    this.log.info('worker taken over in light sleep (its browser closed)');
  }

  /** The driver's notice that this persona's worker ended without being asked to. */
  onExit(handle: InstanceHandle, info: ExitInfo): void {
    // A leftover that ended by itself needs no stop any more.
    if (this.leftovers.ended(handle.id)) return;
    if (this.worker?.handle.id !== handle.id) return;
    if (this.state === 'waking') {
      this.exitDuringStart = info;
      return;
    }
    // A stop under way ends the worker itself, and says what comes next.
    if (this.state === 'stopping') return;
    this.workerGone();
    this.log.warn('worker ended', { reason: info.reason });
    this.opts.counters?.crashed(this.name);
    if (this.closed) return;
    if (this.spec.mode === 'always-on') {
      this.restartOwed = true;
      this.backoff.failed();
      this.apply('fail', `worker died: ${info.reason}`);
      this.scheduleRetry();
    } else {
      // A sleepy persona sleeps; its next request wakes it.
      this.desired = 'asleep';
      this.apply('exit', `worker died: ${info.reason}`);
    }
  }

  /**
   * One step toward the desired state, in the queue: a start when it should be awake and is
   * not, the stop of the leftovers when it should sleep. A failure schedules the next try.
   */
  private async reconcile(): Promise<void> {
    if (this.fatal || this.converged()) return;
    if (this.desired === 'awake' && !this.closed) {
      this.countRestart();
      await this.doWake();
    } else await this.doStop();
  }

  /**
   * A driver call that passed its deadline ended after all (a late start's worker is a leftover
   * now, a stop did end): the step it held up is tried at once, in the queue. The back-off's
   * wait, up to a minute after many failures, paces calls that fail; this one has answered.
   */
  private retryNow(): void {
    if (this.closed || this.fatal) return;
    this.serial(() => this.reconcile()).catch((err: unknown) =>
      this.log.warn('try after a late driver call failed', { error: errorMessage(err) }),
    );
  }

  /** A restart begins (asked for, after failed health checks, or after a crash). */
  private countRestart(): void {
    this.restartOwed = false;
    this.opts.counters?.restarted(this.name);
  }

  /** The back-off's next try of `reconcile` (one waits at a time). */
  private scheduleRetry(): void {
    if (this.closed || this.fatal) return;
    const delay = this.backoff.schedule(() => {
      this.serial(() => this.reconcile()).catch((err: unknown) =>
        this.log.error(this.desired === 'awake' ? 'restart failed' : 'stop failed again', {
          error: errorMessage(err),
        }),
      );
    });
    if (delay !== null) {
      const what = this.desired === 'awake' ? 'restart scheduled' : 'stop retry scheduled';
      this.log.info(what, { in_ms: delay, failures: this.backoff.failures });
    }
  }

  /**
   * The fleet's periodic look: idle sleep (or pause, then stop), health checks and the reset of
   * the crash-loop back-off. `checkHealth` is set on every few ticks.
   */
  async tick(checkHealth: boolean, now = Date.now()): Promise<void> {
    // Level-triggered: a persona not as wanted, with nothing under way or waiting, gets a try.
    if (!this.closed && this.pending === 0 && this.backoff.dueAt === null && !this.converged()) {
      this.scheduleRetry();
    }
    const worker = this.worker;
    if (this.closed || !worker) return;
    if (this.state === 'running') this.backoff.settle(worker.upSince, now);
    if (this.pending === 0 && this.ladderStep(now) !== null) {
      await this.serial(() => this.sleepIfIdle()).catch((err: unknown) =>
        this.log.error('sleep failed', { error: errorMessage(err) }),
      );
      return;
    }
    if (checkHealth && this.state === 'running' && worker.depth === null) {
      const handle = worker.handle;
      // A first ping that failed (a worker slow just after start) left the commit unknown: the
      // health checks read it again until it answers, so the list never shows null for good.
      if (this.commit === null && !this.pings.busy) this.readCommit(handle);
      this.identity.readProxyErrors(
        this.pings,
        handle.address,
        () => this.worker?.handle === handle && this.state === 'running',
        this.opts.healthTimeoutMs + 3_000,
      );
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

  private get ladder(): LadderSettings {
    return {
      pauseSeconds: this.opts.pauseSeconds,
      canPause: this.opts.driver.canPause,
      lightSleepSeconds: this.opts.lightSleepSeconds ?? 0,
    };
  }

  /** The step down the idle ladder due now (awake → paused → light → deep), or null. */
  private ladderStep(now = Date.now()): SleepDepth | null {
    const worker = this.worker;
    if (this.closed || !worker) return null;
    return ladderStep(
      {
        sleepy: this.spec.mode === 'sleepy',
        idleTimeoutS: this.spec.idleTimeoutS ?? null,
        busy: this.activity.busy(),
        serving: this.state === 'running' && worker.depth === null,
        kept: this.state === 'sleeping' ? worker.depth : null,
        idleMs: this.activity.idleMs(now),
        atDepthMs: now - worker.depthSince,
      },
      this.ladder,
    );
  }

  /** Re-checked inside the queue: a request may have arrived since the tick looked. */
  private async sleepIfIdle(): Promise<void> {
    const step = this.ladderStep();
    if (step === null) return;
    const wasServing = this.worker?.depth === null;
    this.desired = 'asleep';
    await this.goTo(step);
    if (wasServing) this.opts.counters?.slept(this.name);
  }

  /**
   * Puts the worker at `depth` now (from serving or a lighter depth). A pause or light sleep
   * that fails stops the worker instead: a sleep deeper than asked, never a state unknown.
   */
  private async goTo(depth: SleepDepth): Promise<void> {
    const worker = this.worker;
    if (!worker || depth === 'deep') return this.doStop();
    try {
      if (depth === 'paused') await this.pause(worker);
      else await this.goLight(worker);
    } catch (err) {
      this.log.warn(`${depth === 'paused' ? 'pause' : 'light sleep'} failed: stopping instead`, {
        error: errorMessage(err),
      });
      await this.doStop();
    }
  }

  private async pause(worker: Worker): Promise<void> {
    const driver = this.opts.driver;
    if (!driver.canPause || !driver.pause) throw new Error('this driver cannot pause a worker');
    const paused = driver.pause(worker.handle);
    await deadline(paused, this.driverTimeoutMs, 'the pause', { ended: () => undefined });
    worker.depth = 'paused';
    worker.depthSince = Date.now();
    if (this.state === 'running') this.apply('pause', null);
  }

  /**
   * Light sleep: the worker closes its browser and stays (resumed first when paused; it shows
   * as paused until its browser is closed).
   */
  private async goLight(worker: Worker): Promise<void> {
    if (worker.depth === 'paused') {
      await deadline(
        this.opts.driver.unpause?.(worker.handle) ?? Promise.resolve(),
        this.driverTimeoutMs,
        'the resume',
        { ended: () => undefined },
      );
    }
    await browserDown(worker.handle.address, this.serviceKey, this.opts.readyTimeoutMs);
    worker.depth = 'light';
    worker.depthSince = Date.now();
    if (this.state === 'running') this.apply('pause', null);
    this.log.info('light sleep: the browser is closed, the worker stays');
  }

  /**
   * The wake from light sleep: the kept worker starts its browser. False when it could not (the
   * worker is then a leftover, stopped before a fresh start).
   */
  private async wakeLight(worker: Worker, ended: (ok: boolean) => void): Promise<boolean> {
    this.apply('wake');
    // A browser's start takes a turn as a worker's does: it is most of a worker's start.
    const endTurn = await this.startTurn(ended, worker.handle.node ?? '');
    this.opts.counters?.woke(this.name);
    try {
      await browserUp(worker.handle.address, this.serviceKey, this.opts.readyTimeoutMs);
    } catch (err) {
      this.log.warn('wake from light sleep failed: starting a new worker', {
        error: errorMessage(err),
      });
      endTurn();
      this.workerGone();
      this.placement.renewAgent();
      this.leftovers.add(worker.handle, true);
      return false;
    }
    endTurn();
    worker.depth = null;
    // What changed while it slept (a token revoked) reaches it before any request does.
    await this.opts.workerUp?.(this.name, worker.handle);
    this.healthFails = 0;
    this.activity.touch();
    this.apply('ready', null);
    return true;
  }

  /**
   * Waits for this persona's turn to start (a worker, or a kept worker's browser) and resolves
   * with the function that ends it. A bounded number start at once (a storm of wakes); one whose
   * turn does not come in time goes back to sleep, and its caller is told when to try again.
   */
  private async startTurn(ended: (ok: boolean) => void, node: string): Promise<() => void> {
    const gate = this.opts.startGate;
    if (!gate) return () => undefined;
    try {
      return await gate.turn(this.name, node);
    } catch (err) {
      const message = errorMessage(err);
      this.apply('sleep', message);
      ended(false);
      this.wakeFailed();
      throw new WakeError(`persona ${this.name} did not start: ${message}`, gate.retryAfterS(node));
    }
  }

  /**
   * The node a new worker will start on ('' on a single server): its own (`NODE=`), else the
   * one the driver places it on, claimed for it until its start (`RuntimeDriver.plan`). A
   * placement that fails fails the wake, as a start that fails does.
   */
  private async startNode(spec: InstanceSpec, ended: (ok: boolean) => void): Promise<string> {
    const driver = this.opts.driver;
    if (spec.node) return spec.node;
    if (!driver.plan) return '';
    try {
      return await deadline(driver.plan(spec), this.driverTimeoutMs, 'the placement', {
        // A placement that ends after its deadline claims a node no start will come to.
        ended: () => driver.unplan?.(this.name),
      });
    } catch (err) {
      const message = errorMessage(err);
      this.backoff.failed();
      this.apply('fail', `start failed: ${message}`);
      ended(false);
      this.wakeFailed();
      throw new WakeError(`persona ${this.name} did not start: ${message}`, this.retryAfterS());
    }
  }

  private get serviceKey(): string | null {
    return this.opts.workerEnv.SERVICE_KEY ?? null;
  }

  /** Stops the worker for good (waker shutdown). */
  shutdown(): Promise<void> {
    this.closed = true;
    this.desired = 'asleep';
    this.backoff.cancel();
    return this.serial(async () => {
      await this.doStop();
      // A start that passed its deadline may still start a worker: it is waited for (as long
      // as a driver call may take) and stopped, never left running after the waker.
      if (this.lateStarts.size > 0) {
        await Promise.race([
          Promise.allSettled([...this.lateStarts]),
          new Promise((r) => setTimeout(r, this.driverTimeoutMs).unref()),
        ]);
        await this.doStop();
      }
    }).finally(() => this.placement.close());
  }
}
