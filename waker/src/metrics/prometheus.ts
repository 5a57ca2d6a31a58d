import type { MetricsSample, PersonaState, SleepDepth } from '@persona-browser/contracts';
import { PERSONA_STATES, SLEEP_DEPTHS } from '@persona-browser/contracts';
import type { RefusalReason } from '@persona-browser/service-kit';
import { REFUSAL_REASONS } from '@persona-browser/service-kit';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export const FLEET_PREFIX = 'persona_browser_fleet_';

/** What a persona and its front door report as it happens (the counters' one entry point). */
export interface PersonaCounters {
  /** A persona of the fleet: its counters start at 0 (so a first event is an increase). */
  known(persona: string): void;
  /** A worker start (or a resume from pause) begins. */
  woke(persona: string): void;
  /** The wake ended: ready, or failed. */
  wakeEnded(persona: string, seconds: number, ok: boolean): void;
  /** The persona was put to sleep (asked, or idle): stopped or paused. */
  slept(persona: string): void;
  /**
   * A restart: asked for, after failed health checks, or the start after a crash (the back-off's,
   * or a call's at the port that came first).
   */
  restarted(persona: string): void;
  /** The worker ended without being asked to. */
  crashed(persona: string): void;
  /** A request through the persona's front door ended (`status` null: the client hung up first). */
  request(persona: string, status: number | null, seconds: number): void;
}

/** Where the waker refuses a credential: a persona's port, its own API, or its MCP endpoint. */
export type Door = 'persona' | 'api' | 'mcp';

/** Refusals of a credential, counted by door and reason (service-kit's REFUSAL_REASONS). */
export interface RefusalCounter {
  refused(door: Door, reason: RefusalReason): void;
}

/** A persona as the state gauge reads it, at scrape time. */
export interface PersonaRow {
  name: string;
  mode: string;
  state: PersonaState;
  /** How deep it sleeps (paused, light, deep), or null while not sleeping. */
  depth: SleepDepth | null;
  /** The cluster node that holds it, else null. */
  node: string | null;
}

export interface FleetSources {
  personas: () => PersonaRow[];
  /** The sampler's newest sample (CPU and memory), or null before the first. */
  latest: () => MetricsSample | null;
  /** The memory budget per node ('' for this host): its limit and what awake personas hold. */
  budget?: () => BudgetRow[];
  /** The start gate: starts holding a turn, starts waiting for one. */
  starts?: () => { running: number; waiting: number };
}

/** The memory budget of one node ('' for this host) in MB. */
export type BudgetRow = { node: string; limitMb: number; usedMb: number };

/** Wakes: a resume takes milliseconds, a cold container a minute. */
const WAKE_BUCKETS = [0.1, 0.5, 1, 2, 3, 5, 10, 20, 60, 120];
const REQUEST_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
const MB = 1024 * 1024;

const statusClass = (status: number | null): string =>
  status === null ? 'aborted' : `${Math.floor(status / 100)}xx`;

/**
 * The fleet's Prometheus metrics, one registry per waker. Persona states, CPU and memory are
 * read from their owners (the personas, the sampler) when Prometheus scrapes; wakes, sleeps,
 * restarts, crashes and front-door requests are counted where they happen.
 */
export class FleetMetrics implements PersonaCounters, RefusalCounter {
  readonly registry = new Registry();
  private readonly wakes: Counter<'persona'>;
  private readonly wakeSeconds: Histogram<'persona' | 'result'>;
  private readonly wakeFailures: Counter<'persona'>;
  private readonly sleeps: Counter<'persona'>;
  private readonly restarts: Counter<'persona'>;
  private readonly crashes: Counter<'persona'>;
  private readonly requests: Histogram<'persona' | 'status_class'>;
  private readonly refusals: Counter<'door' | 'reason'>;

  constructor(sources: FleetSources) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry, prefix: FLEET_PREFIX });
    const perPersona = (name: string, help: string): Counter<'persona'> =>
      new Counter({ name: `${FLEET_PREFIX}${name}`, help, labelNames: ['persona'], registers });
    this.wakes = perPersona('persona_wakes_total', 'Worker starts and resumes, by persona');
    this.wakeSeconds = new Histogram({
      name: `${FLEET_PREFIX}persona_wake_duration_seconds`,
      help: 'From a wake to a ready worker (result ok) or to its failure (result failed)',
      labelNames: ['persona', 'result'],
      buckets: WAKE_BUCKETS,
      registers,
    });
    this.wakeFailures = perPersona(
      'persona_wake_failures_total',
      'Wakes that ended without a ready worker, by persona',
    );
    this.sleeps = perPersona(
      'persona_sleeps_total',
      'Times a persona was put to sleep (asked for, or idle), by persona',
    );
    this.restarts = perPersona(
      'persona_restarts_total',
      'Restarts (asked for, after failed health checks, after a crash), by persona',
    );
    this.crashes = perPersona(
      'persona_crashes_total',
      'Workers that ended without being asked to, by persona',
    );
    this.requests = new Histogram({
      name: `${FLEET_PREFIX}front_door_request_duration_seconds`,
      help: "Requests through a persona's port, by status class (aborted: the client left first)",
      labelNames: ['persona', 'status_class'],
      buckets: REQUEST_BUCKETS,
      registers,
    });
    this.refusals = new Counter({
      name: `${FLEET_PREFIX}auth_refusals_total`,
      help:
        "Requests refused for their credential, by door (a persona's port, the waker's API, its " +
        'MCP) and reason (missing, invalid, expired, revoked, persona, scope, page, throttled)',
      labelNames: ['door', 'reason'],
      registers,
    });
    for (const door of ['persona', 'api', 'mcp'] as const)
      for (const reason of REFUSAL_REASONS) this.refusals.inc({ door, reason }, 0);
    new Gauge({
      name: `${FLEET_PREFIX}persona_state`,
      help: "1 for each persona's current state (and node in a cluster), 0 for the others",
      labelNames: ['persona', 'mode', 'state', 'node'],
      registers,
      collect() {
        this.reset();
        for (const p of sources.personas()) {
          const node = p.node ?? '';
          for (const state of PERSONA_STATES) {
            this.set({ persona: p.name, mode: p.mode, state, node }, p.state === state ? 1 : 0);
          }
        }
      },
    });
    new Gauge({
      name: `${FLEET_PREFIX}persona_sleep_depth`,
      help: '1 for the depth a sleeping persona sleeps at (paused, light, deep), 0 for the others',
      labelNames: ['persona', 'depth'],
      registers,
      collect() {
        this.reset();
        for (const p of sources.personas())
          for (const depth of SLEEP_DEPTHS)
            this.set({ persona: p.name, depth }, +(p.depth === depth));
      },
    });
    new Gauge({
      name: `${FLEET_PREFIX}persona_cpu_percent`,
      help: "CPU of a persona's worker process tree (percent of one core), at the last sample",
      labelNames: ['persona'],
      registers,
      collect() {
        this.reset();
        for (const [name, s] of Object.entries(sources.latest()?.instances ?? {}))
          if (s) this.set({ persona: name }, s.cpu_pct);
      },
    });
    new Gauge({
      name: `${FLEET_PREFIX}persona_memory_bytes`,
      help: "Memory (PSS) of a persona's worker process tree, at the last sample",
      labelNames: ['persona'],
      registers,
      collect() {
        this.reset();
        for (const [name, s] of Object.entries(sources.latest()?.instances ?? {}))
          if (s) this.set({ persona: name }, s.rss_mb * MB);
      },
    });
    const starts = sources.starts;
    if (starts) {
      new Gauge({
        name: `${FLEET_PREFIX}starts_running`,
        help: "Workers (or kept workers' browsers) starting now, each holding a start turn",
        registers,
        collect() {
          this.set(starts().running);
        },
      });
      new Gauge({
        name: `${FLEET_PREFIX}starts_waiting`,
        help: 'Starts waiting for a turn (WAKER_WAKE_CONCURRENCY are running)',
        registers,
        collect() {
          this.set(starts().waiting);
        },
      });
    }
    const host = (name: string, help: string, read: (s: MetricsSample) => number): Gauge =>
      new Gauge({
        name: `${FLEET_PREFIX}${name}`,
        help,
        registers,
        collect() {
          const s = sources.latest();
          if (s) this.set(read(s));
        },
      });
    host('host_memory_total_bytes', "The waker's host memory", (s) => s.system.mem_total_mb * MB);
    host(
      'host_memory_used_bytes',
      "The waker's host memory in use",
      (s) => s.system.mem_used_mb * MB,
    );
    host('host_cpu_percent', "The waker's host CPU, summed over cores", (s) => s.system.cpu_pct);
    const budget = (name: string, help: string, read: (b: BudgetRow) => number): Gauge =>
      new Gauge({
        name: `${FLEET_PREFIX}${name}`,
        help,
        labelNames: ['node'],
        registers,
        collect() {
          this.reset();
          for (const b of sources.budget?.() ?? [])
            if (Number.isFinite(read(b))) this.set({ node: b.node }, read(b));
        },
      });
    budget(
      'memory_budget_bytes',
      "The personas' memory budget per node (FLEET_MEMORY_LIMIT_MB; node empty on one server)",
      (b) => b.limitMb * MB,
    );
    budget(
      'memory_budget_used_bytes',
      "Memory the awake personas' workers hold against the budget, per node, at the last sample",
      (b) => b.usedMb * MB,
    );
  }

  /**
   * Counters start at 0 (an alert's `increase` then sees a first event); the histograms, 13
   * series a persona, appear with a persona's first wake or request, which keeps a fleet of
   * 500 mostly sleeping personas to a few thousand series.
   */
  known(persona: string): void {
    for (const c of [this.wakes, this.wakeFailures, this.sleeps, this.restarts, this.crashes])
      c.inc({ persona }, 0);
  }

  woke(persona: string): void {
    this.wakes.inc({ persona });
  }

  wakeEnded(persona: string, seconds: number, ok: boolean): void {
    this.wakeSeconds.observe({ persona, result: ok ? 'ok' : 'failed' }, seconds);
    if (!ok) this.wakeFailures.inc({ persona });
  }

  slept(persona: string): void {
    this.sleeps.inc({ persona });
  }

  restarted(persona: string): void {
    this.restarts.inc({ persona });
  }

  crashed(persona: string): void {
    this.crashes.inc({ persona });
  }

  request(persona: string, status: number | null, seconds: number): void {
    this.requests.observe({ persona, status_class: statusClass(status) }, seconds);
  }

  refused(door: Door, reason: RefusalReason): void {
    this.refusals.inc({ door, reason });
  }

  async scrape(): Promise<{ contentType: string; text: string }> {
    return { contentType: this.registry.contentType, text: await this.registry.metrics() };
  }
}
