/**
 * The memory budget's planner, pure: from the personas' states, memory and activity, the
 * budget and the host's free memory, what must be put to sleep before a persona wakes, or why
 * it cannot wake. The budget (budget.ts) reads the inputs and carries the plan out.
 */

/** A persona as the planner sees it. */
export interface PlanPersona {
  name: string;
  /** Only sleepy personas are ever put to sleep to make room. */
  sleepy: boolean;
  /** Its worker holds memory: running, waking or paused (a paused worker keeps its memory). */
  awake: boolean;
  /** Running and answering (not waking, not stopping): the only state that may be put to sleep. */
  running: boolean;
  /** Why it must stay awake (a request in flight, a live view open), else null. */
  busy: string | null;
  /** When its last request or socket ended (ms since the epoch): the least recent sleeps first. */
  lastActiveMs: number;
  /** Its last measured memory (MB): the peak of its last awake run; null when never measured. */
  measuredMb: number | null;
  /** The cluster node that holds it, else null (one server). */
  node: string | null;
}

export interface Budget {
  /** FLEET_MEMORY_LIMIT_MB: per node in a cluster. */
  limitMb: number;
  /** FLEET_MAX_AWAKE: per node, or null for no maximum. */
  maxAwake: number | null;
  /** FLEET_MEMORY_DEFAULT_MB: the estimate of a persona when none was ever measured. */
  defaultMb: number;
}

/** The host's own memory, where the waker can read it (this host's personas only). */
export interface HostMemory {
  /** MemAvailable of /proc/meminfo. */
  availableMb: number;
  /** HOST_MEMORY_MIN_AVAILABLE_MB. */
  minAvailableMb: number;
}

export interface PlanInput {
  personas: PlanPersona[];
  /** The persona to wake (one of `personas`). */
  waking: string;
  budget: Budget;
  host: HostMemory | null;
}

export interface Plan {
  /** Idle sleepy personas to put to sleep first, least recently used first. */
  sleep: string[];
  /** Why the persona cannot wake even then, or null when it may. */
  refused: string | null;
  /** The estimate of the waking persona (MB) and the budget's use once it is awake. */
  estimateMb: number;
  usedMb: number;
}

const median = (values: number[]): number | null => {
  if (!values.length) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[mid] ?? 0) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
};

/**
 * A persona's memory before it wakes. Its own last measure first (the peak of its last awake
 * run): a persona's profile (its tabs, its sites, its caches) is what makes its Chromium big or
 * small, so its own history is the best guess. Else the median of the fleet's measured personas: they run the same worker
 * and browser, and the median is not pulled by one persona with a heavy page. Else, on a fleet
 * that measured nothing yet (the first wake after start), the FLEET_MEMORY_DEFAULT_MB setting.
 */
export function estimateMb(
  p: PlanPersona,
  fleetMedianMb: number | null,
  defaultMb: number,
): number {
  return p.measuredMb ?? fleetMedianMb ?? defaultMb;
}

const mb = (n: number): string => `${Math.round(n)} MB`;

/** Decides what to put to sleep for `input.waking` to wake, or refuses it with the reason. */
export function planWake(input: PlanInput): Plan {
  const { budget, host } = input;
  const target = input.personas.find((p) => p.name === input.waking);
  if (!target) throw new Error(`memory plan: unknown persona ${input.waking}`);
  const fleetMedian = median(
    input.personas.map((p) => p.measuredMb).filter((m): m is number => m !== null),
  );
  const estimate = (p: PlanPersona): number => estimateMb(p, fleetMedian, budget.defaultMb);
  // The budget is per node: only the personas on the waking one's node share it.
  const holders = input.personas.filter(
    (p) => p.awake && p.name !== target.name && p.node === target.node,
  );
  const need = estimate(target);
  let used = holders.reduce((sum, p) => sum + estimate(p), 0);
  let awake = holders.length;
  // The host's own shortage: what must be freed so MemAvailable stays above the threshold.
  let hostShortMb = host ? Math.max(0, host.minAvailableMb - (host.availableMb - need)) : 0;
  const fits = (): boolean =>
    used + need <= budget.limitMb &&
    (budget.maxAwake === null || awake + 1 <= budget.maxAwake) &&
    hostShortMb <= 0;

  const candidates = holders
    .filter((p) => p.sleepy && p.running && p.busy === null)
    .sort((a, b) => a.lastActiveMs - b.lastActiveMs || a.name.localeCompare(b.name));
  const sleep: string[] = [];
  for (const p of candidates) {
    if (fits()) break;
    sleep.push(p.name);
    const freed = estimate(p);
    used -= freed;
    awake -= 1;
    hostShortMb -= freed;
  }
  if (fits()) return { sleep, refused: null, estimateMb: need, usedMb: used + need };

  // Nothing more can be freed: say which limit holds and who holds it.
  const kept = holders.filter((p) => !sleep.includes(p.name));
  const who = kept.length
    ? kept
        .map((p) => {
          const why = !p.sleepy ? 'always-on' : (p.busy ?? (p.running ? 'idle' : 'starting'));
          return `${p.name} ${mb(estimate(p))} (${why})`;
        })
        .join(', ')
    : 'no other persona';
  const where = target.node ? ` on node ${target.node}` : '';
  let limit: string;
  if (hostShortMb > 0 && host) {
    limit =
      `the host has ${mb(host.availableMb)} available, under ` +
      `HOST_MEMORY_MIN_AVAILABLE_MB=${host.minAvailableMb} once ${target.name} takes about ${mb(need)}`;
  } else if (budget.maxAwake !== null && awake + 1 > budget.maxAwake) {
    limit = `FLEET_MAX_AWAKE=${budget.maxAwake}${where} is reached`;
  } else {
    limit =
      `the memory budget FLEET_MEMORY_LIMIT_MB=${budget.limitMb}${where} is held: ` +
      `${mb(used)} in use, ${target.name} needs about ${mb(need)}`;
  }
  return {
    sleep,
    refused: `${limit}; held by ${who}; no idle sleepy persona is left to put to sleep`,
    estimateMb: need,
    usedMb: used,
  };
}
