import type { Logger } from '@persona-browser/service-kit';
import type { IdentitySettings } from '../config';
import type { InstanceHandle, RuntimeDriver } from '../drivers/types';
import type { PersonaCounters } from '../metrics/prometheus';
import type { StartGate } from './start-gate';

/** What every persona of a fleet is run with. */
export interface PersonaOptions {
  driver: RuntimeDriver;
  logger: Logger;
  /** Variables every worker gets (`.env`, SERVICE_KEY, COMMIT_INFO). */
  workerEnv: Record<string, string>;
  /** Sleepy personas: pause this long after IDLE_TIMEOUT before going deeper (0: no pause). */
  pauseSeconds: number;
  /** Then keep the worker with its browser closed this long before stopping it (0: never). */
  lightSleepSeconds?: number;
  /** How long a start may take to reach `initialized` (a cold container, a slow disk). */
  readyTimeoutMs: number;
  /** Consecutive failed health checks before a running worker is restarted. */
  healthFailures: number;
  /** How long one health check (status) may take. */
  healthTimeoutMs: number;
  /** How long the driver's start, stop or resume may take before it counts as failed. */
  driverTimeoutMs?: number;
  /** The proxy gateway, account and GeoIP service, for personas with PROXY_COUNTRY. */
  identity?: IdentitySettings | null;
  /**
   * Runs before a running worker is stopped (a failure is logged, the stop goes on): what only
   * the worker can still tell, such as a cluster node's request counts, is kept here.
   */
  beforeStop?: (personaDir: string, handle: InstanceHandle) => Promise<void>;
  /**
   * Makes room before a worker starts (the memory budget): may put other personas to sleep, and
   * rejects (a BudgetRefusal) when the persona may not wake now.
   */
  admit?: (persona: string) => Promise<void>;
  /**
   * Runs once a worker answers (started, resumed or taken over), before requests reach it: what
   * the worker must know first, such as the tokens revoked for it. A failure is its own to log.
   */
  workerUp?: (persona: string, handle: InstanceHandle) => Promise<void>;
  /** Where wakes, sleeps, restarts and crashes are counted (Prometheus' /metrics). */
  counters?: PersonaCounters;
  /**
   * The node's start gate, shared by the fleet: a worker's start (to its first answer) waits
   * for a turn, so a storm of wakes starts a few workers at a time. None: every start at once.
   */
  startGate?: StartGate;
}
