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
/**
 * How long a persona whose last task failed still counts on its node when placing another: the
 * waker tries it again there (its back-off waits at most a minute, a start up to two).
 */
export const CRASH_WINDOW_MS = 5 * 60_000;
/** On the services the waker makes: the image's name as configured, when the spec holds its id. */
export const IMAGE_LABEL = 'persona-browser.image';

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
  /** The image's name (PERSONA_IMAGE) when `image` is a reference the nodes resolve (an id). */
  imageName?: string;
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
  const named: Record<string, string> = input.imageName ? { [IMAGE_LABEL]: input.imageName } : {};
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
    Labels: { ...labels, ...named },
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
export function overlayAnchor(
  fleetId: string,
  image: string,
  network: string,
  imageName?: string,
): Docker.ServiceSpec {
  const labels = { [FLEET_LABEL]: fleetId };
  return {
    Name: `pb-${fleetId}-anchor`,
    Labels: imageName ? { ...labels, [IMAGE_LABEL]: imageName } : labels,
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

/** A persona running, starting or crash-looping somewhere, and the memory it is counted for. */
export interface PlacedPersona {
  node: string;
  memoryMb: number;
  persona?: string;
  phase?: 'running' | 'starting' | 'crash-looping';
}

/**
 * The node with the most memory left for personas: its memory less what the personas placed
 * on it are counted for (their limit, else UNLIMITED_PERSONA_MB), running, starting or
 * crash-looping alike (see placedPersonas). Ready and active nodes only; ties go to the first
 * by name, so a choice can be foreseen. Null when no node can take one.
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

/** A persona service as placement reads it from the engine. */
export interface ServiceLoad {
  id: string;
  persona: string;
  /** From its placement constraint; null when it has none. */
  node: string | null;
  replicas: number;
  /** Its memory limit, else UNLIMITED_PERSONA_MB. */
  memoryMb: number;
}

/** The few fields of a task placement reads (swarm-state's TaskInfo has them). */
export interface TaskSeen {
  serviceId: string;
  state: string;
  /** ISO time of the task's last change. */
  updated: string;
}

const FAILED = new Set(['failed', 'rejected']);

/** Whether (and as what) a persona service counts on its node; null when it does not. */
function loadPhase(
  service: ServiceLoad,
  task: TaskSeen | undefined,
  now: number,
): PlacedPersona['phase'] | null {
  if (!task) return service.replicas > 0 ? 'starting' : null;
  const phase = taskPhase(task.state);
  if (phase !== 'ended') return phase;
  const recent = now - Date.parse(task.updated) < CRASH_WINDOW_MS;
  return FAILED.has(task.state) && recent ? 'crash-looping' : null;
}

/**
 * What each node holds when a new persona is placed, from the fleet's services and their tasks:
 * a persona counts on its node while its latest task runs or starts (or its service wants a
 * replica the scheduler has not made yet), and for CRASH_WINDOW_MS after that task failed or
 * was rejected, since the waker's back-off starts it there again: a node whose personas crash
 * (an image missing there) would otherwise look empty and draw every new persona. A service
 * asleep (no replica, its last task shut down) counts for nothing. `starting` are the starts
 * under way in this waker, some with no service yet: each replaces its persona's service.
 */
export function placedPersonas(
  services: ServiceLoad[],
  tasks: TaskSeen[],
  now: number,
  starting: PlacedPersona[] = [],
): PlacedPersona[] {
  const latest = new Map<string, TaskSeen>();
  for (const t of tasks) {
    const seen = latest.get(t.serviceId);
    if (!seen || t.updated > seen.updated) latest.set(t.serviceId, t);
  }
  const mine = new Set(starting.map((p) => p.persona));
  const placed: PlacedPersona[] = [];
  for (const s of services) {
    if (!s.node || mine.has(s.persona)) continue;
    const phase = loadPhase(s, latest.get(s.id), now);
    if (phase) placed.push({ node: s.node, memoryMb: s.memoryMb, persona: s.persona, phase });
  }
  return [...placed, ...starting.map((p) => ({ ...p, phase: p.phase ?? 'starting' }))];
}

// --- the image every node runs -------------------------------------------------------------

/** The local image as the manager's engine describes it (`docker image inspect`). */
export interface LocalImage {
  Id: string;
  RepoDigests?: string[];
}

/** How services name the image, and why. */
export interface ImageRef {
  /** PERSONA_IMAGE as configured: what a node must hold, and what README's copy command names. */
  name: string;
  /** What ContainerSpec.Image holds. */
  ref: string;
  /**
   * `id`: the local image's id; a node never asks a registry for it (Swarm skips the pull of
   * an image given by id), so it must hold the image. `digest`: `<name>@<digest>` of the
   * registry it was pushed to; a node that has it starts it without asking the registry, one
   * that has not pulls exactly that. `name`: as configured (not on the manager: nodes pull it).
   */
  how: 'id' | 'digest' | 'name';
}

/** `host:port/…`, `host.domain/…` or `localhost/…`: a name a node pulls from that registry. */
export function namesRegistry(name: string): boolean {
  const first = name.split('/')[0] ?? '';
  return (
    name.includes('/') && (first.includes('.') || first.includes(':') || first === 'localhost')
  );
}

/** A name without its tag or digest, Docker Hub's prefixes left out: `redis`, `reg:5000/pb`. */
function repositoryOf(name: string): string {
  const bare = name.split('@')[0] ?? '';
  const repo = bare.replace(/:[^/:]+$/, '');
  return repo.replace(/^(docker\.io|index\.docker\.io)\//, '').replace(/^library\//, '');
}

/**
 * What the services run: a registry's digest when the manager's image came from (or went to)
 * a registry of that name, else the image's id when the image is only local (built here, copied
 * to the nodes by `docker save | docker load`, which keeps the id): a tag alone makes every
 * task start try a pull first, and a node without a registry (or without DNS) waits out its
 * time-out, about 20 s a wake. Not on the manager: the name as it is.
 */
export function imageReference(name: string, local: LocalImage | null): ImageRef {
  if (!local?.Id) return { name, ref: name, how: 'name' };
  const repo = repositoryOf(name);
  const pinned = (local.RepoDigests ?? []).find((d) => repositoryOf(d) === repo);
  const digest = pinned?.split('@')[1];
  if (digest) return { name, ref: `${name.split('@')[0] ?? name}@${digest}`, how: 'digest' };
  if (namesRegistry(name)) return { name, ref: name, how: 'name' };
  return { name, ref: local.Id, how: 'id' };
}

/** README's command that puts the image on a node without a registry. */
export const copyCommand = (image: string, node: string): string =>
  `docker save ${image} | ssh ${node} docker load`;

const NO_SUCH_IMAGE = /no such image|image .* not found|pull access denied|manifest unknown/i;

/** The error of a task (or of a one-shot step) that could not run because its image is missing. */
export function imageMissing(error: string, node: string, image: ImageRef): string | null {
  if (!NO_SUCH_IMAGE.test(error)) return null;
  const how = namesRegistry(image.name)
    ? `check that node ${node} can pull it from its registry, or copy it: `
    : 'copy it there (no registry needed): ';
  return (
    `image ${image.name} is missing on node ${node} (${error.trim()}): ${how}` +
    `${copyCommand(image.name, node)} (README, "A fleet across servers")`
  );
}

/** Why a start failed, from its task that ended before it ran. */
export function startFailure(
  task: { state: string; error: string },
  node: string,
  image: ImageRef,
): string {
  const reason = task.error || 'no reason';
  return imageMissing(reason, node, image) ?? `task ${task.state} on node ${node}: ${reason}`;
}

/** States in which the node may still be pulling the image (the pull is part of preparing). */
const PULLING = new Set(['assigned', 'accepted', 'preparing']);

/**
 * Why no task ran within the start's time: a task left preparing names the pull it is most
 * likely stuck in (a node that cannot reach the registry waits out its DNS time-out, a large
 * image takes a while the first time), with the ways out.
 */
export function startTimeout(
  task: { state: string; error: string } | null,
  node: string,
  seconds: number,
  image: ImageRef,
): string {
  const head = `no task running on node ${node} after ${seconds} s`;
  if (!task) return head;
  const detail = ` (task ${task.state}: ${task.error || 'no reason'})`;
  const pulling = /pull/i.test(task.error) || (PULLING.has(task.state) && image.how !== 'id');
  if (!pulling) return head + detail;
  return (
    `${head}${detail}: node ${node} is most likely still pulling image ${image.ref} ` +
    `(a node that cannot reach the registry waits out the pull's time-out at every start): ` +
    `copy the image there (${copyCommand(image.name, node)}) or give the fleet a registry ` +
    '(PERSONA_REGISTRY); README, "A fleet across servers", says how to avoid pulls'
  );
}
