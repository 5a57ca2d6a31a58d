/**
 * The Swarm driver's decisions as pure functions: the service of a persona, where a new persona
 * goes, what a task's state means. No engine is called here.
 */
import type Docker from 'dockerode';

import { FLEET_LABEL, PERSONA_LABEL, SHM_BYTES, STOP_TIMEOUT_S } from './worker-container';

export { FLEET_LABEL, PERSONA_LABEL, WORKER_PORT } from './worker-container';
/** The engine API from which a service may carry a seccomp profile of its own (Docker 25). */
const SECCOMP_API = [1, 44] as const;
/** What a running persona without MEMORY_LIMIT_MB is counted as when placing a new one. */
export const UNLIMITED_PERSONA_MB = 1024;

export const serviceName = (fleetId: string, persona: string): string => `pb-${fleetId}-${persona}`;

/** SWARM_DATA_DIR with `{node}` replaced: the folder of a node's personas, on that node. */
export const nodeDataDir = (template: string, node: string): string =>
  template.split('{node}').join(node);

/** Whether an engine of this API version takes `Privileges.Seccomp` on a service. */
export function serviceSeccompSupported(apiVersion: string): boolean {
  const [major = 0, minor = 0] = apiVersion.split('.').map(Number);
  return major > SECCOMP_API[0] || (major === SECCOMP_API[0] && minor >= SECCOMP_API[1]);
}

/** A service's container spec, with the seccomp field newer engines know. */
type PersonaContainerSpec = Docker.ContainerSpec & {
  Privileges?: Docker.Privileges & { Seccomp?: { Mode: 'custom'; Profile: string } };
};

export interface PersonaServiceInput {
  fleetId: string;
  persona: string;
  image: string;
  /** The worker's whole environment. */
  env: Record<string, string>;
  /** Hostname of the node that holds the persona's folder. */
  node: string;
  /** The persona's folder on that node. */
  folder: string;
  network: string;
  memoryLimitMb: number | null;
  cpus: number | null;
  /**
   * The seccomp profile (JSON text) where the engine takes one on a service; null on older
   * engines, where the container instead keeps CAP_SYS_ADMIN in its bounding set so that
   * Docker's default profile allows the namespaces Chromium's sandbox makes. The image's
   * entry point drops every capability before the worker starts either way.
   */
  seccomp: string | null;
  replicas: 0 | 1;
}

/**
 * Why a persona cannot run as a Swarm service, or null. A service cannot be given a device:
 * Docker's service API has no `Devices` (20.10 up to the current one; moby/swarmkit#1244 is
 * open), and a bind mount of /dev/dri shows the nodes but the container's device rules refuse
 * to open them. So `GPU=dri` would silently draw in software: refused with the way out instead.
 */
export function serviceProblem(env: Readonly<Record<string, string>>): string | null {
  return env.GPU === 'dri'
    ? 'GPU=dri cannot be given to a Swarm service (services take no devices): ' +
        'run this persona with the docker driver on a host with /dev/dri, or remove GPU'
    : null;
}

/** One persona as one replicated service: pinned to its node, reached by name (dnsrr). */
export function personaService(input: PersonaServiceInput): Docker.ServiceSpec {
  const labels = { [PERSONA_LABEL]: input.persona, [FLEET_LABEL]: input.fleetId };
  const container: PersonaContainerSpec = {
    Image: input.image,
    Labels: labels,
    Env: Object.entries(input.env).map(([k, v]) => `${k}=${v}`),
    Mounts: [
      { Type: 'bind', Source: input.folder, Target: '/persona' },
      {
        Type: 'tmpfs',
        Source: '',
        Target: '/dev/shm',
        TmpfsOptions: { SizeBytes: SHM_BYTES, Mode: 0o1777 },
      },
    ],
    StopGracePeriod: STOP_TIMEOUT_S * 1e9,
    ...(input.seccomp
      ? {
          Privileges: {
            Seccomp: { Mode: 'custom', Profile: Buffer.from(input.seccomp).toString('base64') },
          },
        }
      : { CapabilityAdd: ['CAP_SYS_ADMIN'] }),
  };
  return {
    Name: serviceName(input.fleetId, input.persona),
    Labels: labels,
    TaskTemplate: {
      ContainerSpec: container,
      Resources: {
        Limits: {
          ...(input.memoryLimitMb ? { MemoryBytes: input.memoryLimitMb * 1024 * 1024 } : {}),
          ...(input.cpus ? { NanoCPUs: Math.round(input.cpus * 1e9) } : {}),
        },
      },
      // The waker restarts workers itself (its back-off, its health checks), as with Docker.
      RestartPolicy: { Condition: 'none' },
      Placement: { Constraints: [`node.hostname==${input.node}`] },
      Networks: [{ Target: input.network }],
    },
    Mode: { Replicated: { Replicas: input.replicas } },
    EndpointSpec: { Mode: 'dnsrr' },
  };
}

/**
 * An idle task on every node, on the fleet's overlay: a node keeps its part of an overlay only
 * while a container there uses it, and building it again costs each wake about half a second
 * (measured by waker/bench/swarm.ts). Global mode follows nodes as they join.
 */
export function overlayAnchor(fleetId: string, image: string, network: string): Docker.ServiceSpec {
  const labels = { [FLEET_LABEL]: fleetId };
  return {
    Name: `pb-${fleetId}-anchor`,
    Labels: labels,
    TaskTemplate: {
      ContainerSpec: {
        Image: image,
        Labels: labels,
        // tini as PID 1 ends at once on the stop signal, which a bare sleep would ignore.
        Command: ['tini', '--', 'sleep', 'infinity'],
      },
      Resources: { Limits: { MemoryBytes: 32 * 1024 * 1024 } },
      Networks: [{ Target: network }],
    },
    Mode: { Global: {} },
    EndpointSpec: { Mode: 'dnsrr' },
  };
}

/** A node as placement sees it. */
export interface NodeRoom {
  hostname: string;
  ready: boolean;
  /** Availability `active` (not paused or drained). */
  active: boolean;
  memoryMb: number;
}

/** A persona running (or starting) somewhere, and the memory it is counted for. */
export interface PlacedPersona {
  node: string;
  memoryMb: number;
}

/**
 * The node with the most memory left for personas: its memory less what the personas running
 * on it are counted for (their limit, else UNLIMITED_PERSONA_MB). Ready and active nodes only;
 * ties go to the first by name, so a choice can be foreseen. Null when no node can take one.
 */
export function chooseNode(nodes: NodeRoom[], placed: PlacedPersona[]): string | null {
  let best: { hostname: string; free: number } | null = null;
  const sorted = [...nodes].sort((a, b) => a.hostname.localeCompare(b.hostname));
  for (const n of sorted) {
    if (!n.ready || !n.active) continue;
    const used = placed.filter((p) => p.node === n.hostname).reduce((s, p) => s + p.memoryMb, 0);
    const free = n.memoryMb - used;
    if (!best || free > best.free) best = { hostname: n.hostname, free };
  }
  return best?.hostname ?? null;
}

/** Swarm task states on the way to running, and those a task never leaves. */
const STARTING = new Set([
  'new',
  'pending',
  'assigned',
  'accepted',
  'ready',
  'preparing',
  'starting',
]);
const ENDED = new Set(['complete', 'shutdown', 'failed', 'rejected', 'orphaned', 'remove']);

export type TaskPhase = 'starting' | 'running' | 'ended';

export function taskPhase(state: string): TaskPhase {
  if (state === 'running') return 'running';
  if (STARTING.has(state)) return 'starting';
  return ENDED.has(state) ? 'ended' : 'starting';
}
