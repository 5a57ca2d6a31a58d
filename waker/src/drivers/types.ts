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
  /**
   * The node a start of `spec` will run on (a cluster's choice), claimed for it from now on:
   * placement counts it there until `start(spec)`, which runs it there, or until `unplan`. It
   * lets the waker take that node's start turn before the start. Drivers of one server leave
   * this out.
   */
  plan?(spec: InstanceSpec): Promise<string>;
  /** Drops the claim of a `plan` whose start will not come (its turn was refused). */
  unplan?(persona: string): void;
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
  /**
   * `nodeProblem`, the cluster's node list read again first when the last one names a problem:
   * a node just back is not refused on a list a poll old. For a step about to use the node.
   */
  nodeProblemNow?(node: string): Promise<string | null>;
  /**
   * The waker's own connection to a worker on `node` failed before any answer (refused, reset,
   * unreachable, timed out): the driver may hold the node as not answering in `nodeProblem`
   * before its cluster notices. Drivers of one server leave this out.
   */
  workerUnreachable?(node: string, error: NodeJS.ErrnoException): void;
  /** Called when a node that was down is ready again. */
  onNodeReady?(listener: (node: string) => void): void;
  /** The cluster's nodes as last seen; absent on a single server. */
  nodes?(): NodeStatus[];
  /** Moving a persona's folder between nodes: only drivers of several nodes have it. */
  readonly moves?: FolderMoves;
  /** Releases the driver's own resources (event streams); instances are stopped by the caller. */
  close(): Promise<void>;
}

/** A node of the cluster, as the waker's API shows it. */
export interface NodeStatus {
  hostname: string;
  /** The engine answers the manager's heartbeats. */
  ready: boolean;
  /** Availability `active`: new tasks may start there (not drained or paused). */
  active: boolean;
  memory_mb: number;
  /** Its cores (0 where the engine does not say): how many workers start there at once. */
  cpus: number;
  /** The engine's words for its state ("heartbeat failure"). */
  message: string;
}

/** Copies of a sleeping persona's folder between the nodes of a cluster. */
export interface FolderMoves {
  /** Copies the folder from one node to another and checks it arrived whole; the source stays. */
  copy(persona: string, from: string, to: string): Promise<FolderCopy>;
  /**
   * Removes the persona's copy on `node`, the one on `keptOn` staying: the old copy after a
   * move, or a new one that did not start.
   */
  remove(persona: string, node: string, keptOn: string): Promise<void>;
}

/** What a folder copy carried. */
export interface FolderCopy {
  /** Everything under the folder: files, folders, links. */
  entries: number;
  files: number;
  /** Bytes of the stream that carried it. */
  bytes: number;
  ms: number;
}

/** A start failure that names its cause for the user (bad image, missing file…). */
export class DriverError extends Error {}
