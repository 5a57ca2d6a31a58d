/**
 * The runtime behind the waker: something that runs one worker per persona and tells where it
 * answers. Docker and local child processes today; a Swarm service or a Kubernetes pod fits the
 * same shape (start → an address; stop; find again by labels; an exit notice).
 */
import type { HostPort } from '@persona-browser/contracts';

/** What a worker needs to run as one persona. */
export interface InstanceSpec {
  /** Persona name (folder name). */
  name: string;
  /** The persona folder as the waker sees it. */
  personaDir: string;
  /** Variables for the worker on top of what the driver sets itself. */
  env: Record<string, string>;
  memoryLimitMb: number | null;
  cpus: number | null;
  /** The node that holds the persona's folder (`NODE=` in persona.env); null: the driver
   * chooses (a cluster) or there is only one (a single server). */
  node: string | null;
}

/** Where a running worker's HTTP port answers (and, for a cluster, the tunnel that reaches it). */
export type Address = HostPort;

/** One running (or adopted) worker. */
export interface InstanceHandle {
  /** Driver-specific id: container id, child pid, pod name. */
  id: string;
  persona: string;
  address: Address;
  /** Host pid of the root of the worker's process tree (metrics), null where unknown. */
  pid: number | null;
  /** The cluster node it runs on; absent on a single server. */
  node?: string;
}

/** An instance the driver found from an earlier run of the waker (labels, pid markers). */
export interface FoundInstance {
  handle: InstanceHandle;
  running: boolean;
  paused: boolean;
}

export interface ExitInfo {
  /** Exit code where known. */
  code: number | null;
  /** A short human-readable reason ("exited with 137", "oom"). */
  reason: string;
}

export interface RuntimeDriver {
  readonly kind: string;
  /** pause/unpause keep the worker's memory but stop its CPU: a near-instant wake. */
  readonly canPause: boolean;
  /** Whether a worker found from an earlier run can be taken over as is. */
  readonly canAdopt: boolean;
  /** Starts a worker; resolves once it runs (not yet necessarily answering HTTP). */
  start(spec: InstanceSpec): Promise<InstanceHandle>;
  /** Stops the worker (graceful, then forced) and removes what the driver created for it. */
  stop(handle: InstanceHandle): Promise<void>;
  pause?(handle: InstanceHandle): Promise<void>;
  unpause?(handle: InstanceHandle): Promise<void>;
  /** This fleet's instances left by an earlier waker, keyed by persona. */
  findExisting(): Promise<FoundInstance[]>;
  /** Called once per instance that ends without `stop` having been asked. */
  onExit(listener: (handle: InstanceHandle, info: ExitInfo) => void): void;
  /**
   * Why a node cannot run personas now ("node w2 is down"), null when it can. Drivers of one
   * server have no nodes and leave this out.
   */
  nodeProblem?(node: string): string | null;
  /** Called when a node that was down is ready again. */
  onNodeReady?(listener: (node: string) => void): void;
  /** Releases the driver's own resources (event streams); instances are stopped by the caller. */
  close(): Promise<void>;
}

/** A start failure that names its cause for the user (bad image, missing file…). */
export class DriverError extends Error {}
