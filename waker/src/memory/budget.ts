import type { MetricsSample, PersonaState } from '@persona-browser/contracts';
import type { Logger } from '@persona-browser/service-kit';
import { errorMessage } from '@persona-browser/service-kit';
import type { Activity } from '../persona/activity';
import type { MemorySettings } from './config';
import type { PlanPersona } from './plan';
import { planWake } from './plan';
import { readMem } from '../metrics/host';
import { WakeError } from '../persona/persona';

export type { MemorySettings } from './config';

/** The budget's default: this share of a node's memory (the rest for the OS, the waker, Docker). */
export const DEFAULT_SHARE = 0.8;

/**
 * Seconds a refused client is told to wait: long enough for a request in flight on another
 * persona to end, or for an idle one's sample to be taken, short enough for a person retrying.
 */
export const RETRY_AFTER_S = 10;

/** A wake the budget refused: the answer is a 503 with `Retry-After`, never a hang. */
export class BudgetRefusal extends WakeError {
  override readonly retryAfterS: number = RETRY_AFTER_S;
}

/** What the budget reads of a persona. */
export interface BudgetPersona {
  readonly name: string;
  readonly spec: { mode: string };
  readonly state: PersonaState;
  readonly node: string | null;
  readonly activity: Activity;
  /** Asleep with its worker kept (paused, or in light sleep): the worker holds memory. */
  keepsWorker(): boolean;
  /** Stops the worker if it is still idle and running (or paused); false when it was not. */
  sleepForMemory(): Promise<boolean>;
}

export interface BudgetDeps {
  settings: MemorySettings;
  personas: () => BudgetPersona[];
  logger: Logger;
  /** This host's memory in MB: total and available (/proc/meminfo). */
  hostMemory?: () => Promise<{ totalMb: number; availableMb: number }>;
  /** A cluster node's memory in MB, or null when the driver does not know it. */
  nodeMemoryMb?: (node: string) => number | null;
}

const readHost = async (): Promise<{ totalMb: number; availableMb: number }> => {
  const m = await readMem();
  return { totalMb: m.totalKb / 1024, availableMb: m.availableKb / 1024 };
};

/** Budget rounds: a persona that became busy between the plan and its sleep makes a new plan. */
const MAX_ROUNDS = 3;

/**
 * The fleet's memory budget: before a worker starts, the least recently used idle sleepy
 * personas are put to sleep until the waking one fits (planWake decides); when nothing can be
 * freed the wake is refused. Admissions run one at a time, so two wakes never plan with the
 * same free memory.
 */
export class MemoryBudget {
  /** The last memory measured of each persona (MB), kept after it sleeps. */
  private readonly measured = new Map<string, number>();
  /** The personas measured in the previous sample: their run goes on. */
  private inRun = new Set<string>();
  private chain: Promise<unknown> = Promise.resolve();
  private readonly hostMemory: () => Promise<{ totalMb: number; availableMb: number }>;
  private hostTotalMb: number | null = null;

  constructor(private readonly deps: BudgetDeps) {
    this.hostMemory = deps.hostMemory ?? readHost;
  }

  /**
   * A metrics sample: each persona measured in it is remembered, at the peak of its current
   * awake run (a browser grows from its start as pages load; its peak is what it takes again).
   */
  observe(sample: MetricsSample): void {
    this.hostTotalMb = sample.system.mem_total_mb;
    const running = new Set<string>();
    for (const [name, s] of Object.entries(sample.instances)) {
      if (!s) continue;
      running.add(name);
      const before = this.inRun.has(name) ? (this.measured.get(name) ?? 0) : 0;
      this.measured.set(name, Math.max(before, s.rss_mb));
    }
    this.inRun = running;
  }

  /** The budget of a node (null: this host) in MB. */
  limitMb(node: string | null): number {
    const set = this.deps.settings.limitMb;
    if (set !== null) return set;
    const total = (node ? this.deps.nodeMemoryMb?.(node) : null) ?? this.hostTotalMb;
    return total === null ? Infinity : Math.floor(total * DEFAULT_SHARE);
  }

  /** Per node ('' for this host): the budget and the memory its awake personas hold (peaks). */
  usage(): Array<{ node: string; limitMb: number; usedMb: number }> {
    const byNode = new Map<string, number>();
    for (const p of this.deps.personas()) {
      const node = p.node ?? '';
      const held = awake(p) ? (this.measured.get(p.name) ?? 0) : 0;
      byNode.set(node, (byNode.get(node) ?? 0) + held);
    }
    if (!byNode.size) byNode.set('', 0);
    return [...byNode].map(([node, usedMb]) => ({
      node,
      limitMb: this.limitMb(node || null),
      usedMb,
    }));
  }

  /**
   * Makes room for `name` to wake: puts idle sleepy personas to sleep, or throws BudgetRefusal.
   * An always-on persona is never refused (it is the fleet's declared base): it makes what room
   * it can and starts.
   */
  admit(name: string): Promise<void> {
    const next = this.chain.then(() => this.doAdmit(name));
    this.chain = next.catch(() => undefined);
    return next;
  }

  private async doAdmit(name: string): Promise<void> {
    const log = this.deps.logger.child({ persona: name });
    for (let round = 0; round < MAX_ROUNDS; round += 1) {
      const all = this.deps.personas();
      const target = all.find((p) => p.name === name);
      if (!target) return;
      const host = await this.hostMemory().catch((err: unknown) => {
        log.warn('cannot read the host memory', { error: errorMessage(err) });
        return null;
      });
      if (host) this.hostTotalMb ??= host.totalMb;
      const { settings } = this.deps;
      const plan = planWake({
        personas: all.map((p) => this.planPersona(p)),
        waking: name,
        budget: {
          limitMb: this.limitMb(target.node),
          maxAwake: settings.maxAwake,
          defaultMb: settings.defaultMb,
        },
        // The host's own memory speaks for the personas on this host only.
        host:
          host && settings.minAvailableMb > 0 && target.node === null
            ? { availableMb: host.availableMb, minAvailableMb: settings.minAvailableMb }
            : null,
      });
      const sleepy = target.spec.mode === 'sleepy';
      if (plan.refused && sleepy) {
        log.warn('wake refused by the memory budget', { reason: plan.refused });
        throw new BudgetRefusal(`wake refused: ${plan.refused}`);
      }
      if (plan.refused)
        log.warn('always-on persona starts over the budget', { reason: plan.refused });
      let changed = false;
      for (const other of plan.sleep) {
        const p = all.find((q) => q.name === other);
        const slept = p ? await p.sleepForMemory().catch(() => false) : false;
        if (slept)
          log.info('put to sleep for memory', { slept: other, estimate_mb: plan.estimateMb });
        else changed = true;
      }
      if (!changed || !sleepy) return;
    }
    throw new BudgetRefusal(
      `wake refused: the memory budget could not be freed (personas became busy while it was)`,
    );
  }

  private planPersona(p: BudgetPersona): PlanPersona {
    return {
      name: p.name,
      sleepy: p.spec.mode === 'sleepy',
      awake: awake(p),
      running: p.state === 'running' || p.keepsWorker(),
      busy: p.activity.busyReason(),
      lastActiveMs: p.activity.lastActiveMs(),
      measuredMb: this.measured.get(p.name) ?? null,
      node: p.node,
    };
  }
}

/** Its worker holds memory: starting, running, paused or on its way out. */
const awake = (p: BudgetPersona): boolean =>
  p.state === 'running' || p.state === 'waking' || p.state === 'stopping' || p.keepsWorker();
