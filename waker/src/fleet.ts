import type { CommitInfo, PersonaInfo } from '@persona-browser/contracts';
import type { IdentitySettings } from './config';
import type { Address, InstanceHandle, RuntimeDriver } from './drivers/types';
import os from 'node:os';
import path from 'node:path';
import { AuthGuard } from '@persona-browser/service-kit';
import { AsleepAnswers } from './door/asleep';
import { FrontDoor } from './door/front-door';
import { WorkerDescriptions } from './door/worker-description';
import type { MemoryBudget } from './memory/budget';
import type { Instance, PersonaCounters, PersonaRow } from './metrics';
import type { RefusalCounter } from './metrics/prometheus';
import { keepRequests } from './metrics';
import type { Logger } from '@persona-browser/service-kit';
import { errnoCode, errorMessage } from '@persona-browser/service-kit';
import { Persona } from './persona/persona';
import { StartGate, coresOfNodes } from './persona/start-gate';
import type { PersonaSpec } from './persona/folders';
import { discoverPersonas } from './persona/folders';
import { workerPages } from './worker-client';

export interface FleetOptions {
  personasDir: string;
  wakerPort: number;
  driver: RuntimeDriver;
  logger: Logger;
  /** `.env` values and SERVICE_KEY, handed to every worker. */
  workerEnv: Record<string, string>;
  /** The commit the waker runs, passed to workers as COMMIT_INFO. */
  commit: CommitInfo | null;
  /** The checkout's `.update-trigger`, touched when a persona's update route succeeds. */
  updateTrigger?: string | null;
  /** Sleepy personas pause this long after IDLE_TIMEOUT before they stop (0: stop at once). */
  pauseSeconds?: number;
  /** Then they sleep lightly (the worker kept, its browser closed) this long (0: not at all). */
  lightSleepSeconds?: number;
  readyTimeoutMs?: number;
  /** Period of the idle and health look (ms); health is checked every `healthEvery` ticks. */
  tickMs?: number;
  healthEvery?: number;
  healthFailures?: number;
  healthTimeoutMs?: number;
  /** How long a driver's start, stop or resume may take before it counts as failed. */
  driverTimeoutMs?: number;
  /** Proxy gateway, account and GeoIP service for personas with PROXY_COUNTRY. */
  identity?: IdentitySettings | null;
  /** Where wakes, sleeps, restarts, crashes and front-door requests are counted. */
  counters?: PersonaCounters;
  /** The memory budget every wake is admitted by (memory/budget.ts), or none. */
  budget?: MemoryBudget | null;
  /**
   * The credential check of every persona's port, shared with the waker's API (one throttle);
   * by default one for `workerEnv.SERVICE_KEY` alone (no tokens revoked).
   */
  guard?: AuthGuard;
  /** Where the ports' refusals are counted. */
  refusals?: RefusalCounter | null;
  /** The checkout whose worker the personas run (the public answers of sleeping ones). */
  repoRoot?: string;
  /** Runs once a persona's worker answers, before requests reach it (the revoked tokens). */
  workerUp?: (persona: string, handle: InstanceHandle) => Promise<void>;
  /**
   * Workers that may start at once on each node (WAKER_WAKE_CONCURRENCY); unset or null: each
   * node's own cores, this host's on a single server.
   */
  wakeConcurrency?: number | null;
  /** How long a start may wait for its turn before its caller meets 503 (WAKER_WAKE_QUEUE_S). */
  wakeQueueS?: number;
}

/** The waker's own environment, as a child process inherits it. */
function inheritedEnv(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined) out[k] = v;
  return out;
}

export class UnknownPersona extends Error {
  constructor(name: string) {
    super(`unknown persona: ${name}`);
  }
}

/**
 * The personas of one folder, their front doors and the driver that runs their workers. It owns
 * the list; each Persona owns its own state.
 */
export class Fleet {
  private readonly personas = new Map<string, Persona>();
  private readonly doors: FrontDoor[] = [];
  private timer: NodeJS.Timeout | null = null;
  private ticks = 0;
  private readonly ticking = new Set<string>();
  /** Every start of this fleet's workers takes a turn here (a storm of wakes, bounded). */
  readonly startGate: StartGate;

  constructor(private readonly opts: FleetOptions) {
    const set = opts.wakeConcurrency ?? null;
    this.startGate = new StartGate({
      concurrency: set ?? os.availableParallelism(),
      // Unset, a cluster's node starts as many at once as it has cores.
      nodeConcurrency: coresOfNodes(set, () => opts.driver.nodes?.() ?? []),
      queueMs: (opts.wakeQueueS ?? 60) * 1000,
      onWait: (persona, ahead, node) =>
        opts.logger.info('start waits its turn', {
          persona,
          ahead,
          ...(node ? { node } : {}),
          starting: this.startGate.running,
        }),
    });
  }

  /** Reads the folder, opens every port, takes over or clears old workers, starts always-on. */
  async start(): Promise<void> {
    await this.open();
    await this.takeOver();
    this.begin();
  }

  /**
   * Reads the folder and opens every port (a start-up step of its own: the ones after it, such
   * as `takeOver`, may be retried while the ports already answer).
   */
  async open(): Promise<void> {
    const { logger, driver } = this.opts;
    const { specs, problems } = discoverPersonas(this.opts.personasDir);
    for (const p of problems) {
      logger.error(`persona ${p.name} skipped: invalid ${p.variable}: ${p.message}`, {
        persona: p.name,
        variable: p.variable,
      });
    }
    const workerEnv = { ...this.opts.workerEnv };
    if (this.opts.commit) workerEnv.COMMIT_INFO = JSON.stringify(this.opts.commit);
    const byPort = new Map<number, PersonaSpec>();
    for (const spec of specs) {
      const persona = new Persona(spec, {
        driver,
        logger,
        workerEnv,
        pauseSeconds: this.opts.pauseSeconds ?? 0,
        lightSleepSeconds: this.opts.lightSleepSeconds ?? 0,
        readyTimeoutMs: this.opts.readyTimeoutMs ?? 90_000,
        healthFailures: this.opts.healthFailures ?? 3,
        healthTimeoutMs: this.opts.healthTimeoutMs ?? 3_000,
        ...(this.opts.driverTimeoutMs ? { driverTimeoutMs: this.opts.driverTimeoutMs } : {}),
        identity: this.opts.identity ?? null,
        counters: this.opts.counters,
        startGate: this.startGate,
        ...(this.opts.budget ? { admit: this.opts.budget.admit.bind(this.opts.budget) } : {}),
        ...(this.opts.workerUp ? { workerUp: this.opts.workerUp } : {}),
        // A cluster node's request log is out of this host's reach: its counts are kept here.
        beforeStop: (dir, handle) =>
          handle.node
            ? keepRequests(handle.address, workerEnv.SERVICE_KEY ?? null, dir)
            : Promise.resolve(),
      });
      this.personas.set(spec.name, persona);
      const other = byPort.get(spec.port);
      if (spec.proxyCountry && driver.nodes) {
        // The identity file is written in the manager's folder, which a node's worker never sees.
        persona.markFatal('PROXY_COUNTRY is not available on a cluster (WAKER_DRIVER=swarm) yet');
      } else if (spec.port === this.opts.wakerPort) {
        persona.markFatal(`PORT ${spec.port} is the waker's own port (WAKER_PORT)`);
      } else if (other) {
        persona.markFatal(`PORT ${spec.port} is already used by persona ${other.name}`);
      } else {
        byPort.set(spec.port, spec);
      }
    }
    driver.onExit((handle, info) => this.personas.get(handle.persona)?.onExit(handle, info));
    driver.onNodeReady?.((node) => this.nodeReady(node));

    const guard = this.opts.guard ?? new AuthGuard({ serviceKey: workerEnv.SERVICE_KEY ?? null });
    const asleep = new AsleepAnswers({
      descriptions: new WorkerDescriptions(
        this.opts.repoRoot ?? path.resolve(__dirname, '..', '..'),
      ),
      workerEnv,
      // A child process inherits the waker's environment; a container does not.
      inherited: driver.kind === 'process' ? inheritedEnv() : {},
    });
    for (const persona of this.personas.values()) {
      if (persona.state === 'crashed') continue;
      const door = new FrontDoor({
        persona,
        logger,
        updateTrigger: this.opts.updateTrigger ?? null,
        counters: this.opts.counters ?? null,
        guard,
        refusals: this.opts.refusals ?? null,
        asleep,
      });
      try {
        await door.listen();
        this.doors.push(door);
      } catch (err) {
        const code = errnoCode(err);
        persona.markFatal(
          code === 'EADDRINUSE'
            ? `port ${persona.spec.port} is already in use on the host`
            : `cannot listen on port ${persona.spec.port}: ${errorMessage(err)}`,
        );
      }
    }
    for (const p of this.personas.values()) {
      if (p.state === 'crashed') {
        logger.error(`persona ${p.name} crashed: ${p.error}`, { persona: p.name });
      }
    }
  }

  /** Starts the always-on personas and the periodic look (idle, health, the back-off's net). */
  begin(): void {
    const { logger } = this.opts;
    for (const persona of this.personas.values()) persona.allowStarts();
    for (const persona of this.personas.values()) {
      if (persona.spec.mode === 'always-on' && persona.state === 'waking') {
        persona.wake().catch((err: unknown) => logger.error(errorMessage(err)));
      }
    }
    const tickMs = this.opts.tickMs ?? 1_000;
    this.timer = setInterval(() => this.tick(), tickMs);
  }

  /**
   * Workers of an earlier waker (same fleet id): adopted where possible, else removed. One that
   * cannot be removed now is its persona's leftover, stopped before that persona starts. Throws
   * when the driver cannot list them (the step is retried).
   */
  async takeOver(): Promise<void> {
    const { driver, logger } = this.opts;
    const found = await driver.findExisting();
    const seen = new Set<string>();
    const stale: InstanceHandle[] = [];
    for (const f of found) {
      const persona = this.personas.get(f.handle.persona);
      const usable =
        driver.canAdopt &&
        f.running &&
        persona &&
        persona.state !== 'crashed' &&
        !seen.has(persona.name);
      if (usable) {
        seen.add(persona.name);
        persona.adopt(f.handle, f.paused);
        logger.info('worker taken over', { persona: persona.name, id: f.handle.id });
      } else {
        stale.push(f.handle);
      }
    }
    await Promise.all(
      stale.map((h) =>
        driver.stop(h).then(
          () => logger.info('stale worker removed', { persona: h.persona, id: h.id }),
          (err: unknown) => {
            logger.error('cannot remove stale worker', { id: h.id, err });
            this.personas.get(h.persona)?.leftover(h);
          },
        ),
      ),
    );
  }

  /**
   * A node is back: its always-on personas, which failed while it was away, start now rather
   * than when their back-off next tries.
   */
  private nodeReady(node: string): void {
    this.opts.logger.info('node ready', { node });
    for (const p of this.personas.values()) {
      if (p.node === node && p.spec.mode === 'always-on' && p.state === 'crashed') {
        p.wake().catch((err: unknown) => this.opts.logger.error(errorMessage(err)));
      }
    }
  }

  private tick(): void {
    this.ticks += 1;
    const health = this.ticks % (this.opts.healthEvery ?? 5) === 0;
    for (const p of this.personas.values()) {
      if (this.ticking.has(p.name)) continue;
      this.ticking.add(p.name);
      void p.tick(health).finally(() => this.ticking.delete(p.name));
    }
  }

  /** Every persona (the memory budget reads their states and activity). */
  all(): Persona[] {
    return [...this.personas.values()];
  }

  list(): PersonaInfo[] {
    const now = Date.now();
    return [...this.personas.values()].map((p) => p.info(now));
  }

  /** Each persona's name, mode, state, depth and node: what the Prometheus gauges read. */
  rows(): PersonaRow[] {
    return [...this.personas.values()].map((p) => ({
      name: p.name,
      mode: p.spec.mode,
      state: p.state,
      depth: p.depth,
      node: p.node,
    }));
  }

  get(name: string): Persona {
    const p = this.personas.get(name);
    if (!p) throw new UnknownPersona(name);
    return p;
  }

  /** Where the named persona's worker answers now, or null (unknown, asleep, paused). */
  running(name: string): Address | null {
    return this.personas.get(name)?.runningAddress() ?? null;
  }

  /**
   * A persona's pool as its worker reports it (`status/pages`), with `persona_state`; an
   * empty pool while its worker is not running (the panel's page picker for live links).
   */
  async pages(persona: Persona): Promise<Record<string, unknown>> {
    const address = persona.runningAddress();
    const state = { persona_state: persona.state };
    if (!address) return { total_pages: 0, pages: [], ...state };
    return { ...(await workerPages(address, 5_000)), ...state };
  }

  /** For the metrics sampler: each persona, the host pid of its worker's tree root, its worker. */
  instances(): Instance[] {
    return [...this.personas.values()].map((p) => ({
      name: p.name,
      pid: p.pid(),
      worker: p.runningAddress(),
    }));
  }

  /**
   * Closes every port and lets go of the workers without stopping them: the next waker adopts
   * them (a rolling update then restarts them node by node, none before its node's turn).
   */
  async release(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.startGate.close('the waker is shutting down');
    await Promise.all(this.doors.map((d) => d.close()));
    await this.opts.driver.close();
  }

  /** Stops every worker and closes every port. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    // Starts still waiting for a turn give up at once rather than hold the shutdown.
    this.startGate.close('the waker is shutting down');
    await Promise.all(this.doors.map((d) => d.close()));
    await Promise.all(
      [...this.personas.values()].map((p) =>
        p
          .shutdown()
          .catch((err: unknown) => this.opts.logger.error('stop failed', { persona: p.name, err })),
      ),
    );
    await this.opts.driver.close();
  }
}
