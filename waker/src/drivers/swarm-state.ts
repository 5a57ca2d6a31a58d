/**
 * What the Swarm driver reads back from the manager: nodes, tasks and services, from the
 * engine's loosely typed JSON into the few fields the driver uses.
 */
import { isRecord } from '@persona-browser/service-kit';
import type { NodeRoom, ServiceLoad } from './swarm-plan';
import { FLEET_LABEL, PERSONA_LABEL, UNLIMITED_PERSONA_MB, taskPhase } from './swarm-plan';
import type { ExitInfo, NodeStatus } from './types';

export interface SwarmNodeInfo extends NodeRoom {
  id: string;
  /** The node's cores (the engine's NanoCPUs), 0 where it does not say. */
  cpus: number;
  /** The engine's own words when it is not ready ("heartbeat failure"). */
  message: string;
}

export interface TaskInfo {
  serviceId: string;
  nodeId: string;
  state: string;
  desired: string;
  /** Status.Err: why a task failed or cannot be placed ("no suitable node …"). */
  error: string;
  exitCode: number | null;
  /** When the engine last changed it (ISO), to pick a service's latest task. */
  updated: string;
}

export interface ServiceInfo {
  id: string;
  name: string;
  version: number;
  persona: string;
  replicas: number;
  /** From its placement constraint `node.hostname==…`. */
  node: string | null;
  forceUpdate: number;
}

const rec = (v: unknown): Record<string, unknown> => (isRecord(v) ? v : {});
const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const num = (v: unknown): number => (typeof v === 'number' ? v : 0);

export function readNode(raw: unknown): SwarmNodeInfo {
  const node = rec(raw);
  const description = rec(node.Description);
  const status = rec(node.Status);
  return {
    id: str(node.ID),
    hostname: str(description.Hostname),
    ready: str(status.State) === 'ready',
    active: str(rec(node.Spec).Availability) === 'active',
    memoryMb: Math.floor(num(rec(description.Resources).MemoryBytes) / (1024 * 1024)),
    cpus: Math.floor(num(rec(description.Resources).NanoCPUs) / 1e9),
    message: str(status.Message) || str(status.State),
  };
}

export function readTask(raw: unknown): TaskInfo {
  const task = rec(raw);
  const status = rec(task.Status);
  const container = rec(status.ContainerStatus);
  return {
    serviceId: str(task.ServiceID),
    nodeId: str(task.NodeID),
    state: str(status.State),
    desired: str(task.DesiredState),
    error: str(status.Err) || str(status.Message),
    exitCode: typeof container.ExitCode === 'number' ? container.ExitCode : null,
    updated: str(task.UpdatedAt),
  };
}

const HOSTNAME_CONSTRAINT = /^node\.hostname\s*==\s*(\S+)$/;

/** A persona service of this fleet, else null (another fleet's, or not ours at all). */
export function readService(raw: unknown, fleetId: string): ServiceInfo | null {
  const service = rec(raw);
  const spec = rec(service.Spec);
  const labels = rec(spec.Labels);
  if (labels[FLEET_LABEL] !== fleetId || typeof labels[PERSONA_LABEL] !== 'string') return null;
  const template = rec(spec.TaskTemplate);
  const constraints = rec(template.Placement).Constraints;
  const node = (Array.isArray(constraints) ? constraints : [])
    .map((c) => HOSTNAME_CONSTRAINT.exec(str(c))?.[1])
    .find((h): h is string => typeof h === 'string');
  return {
    id: str(service.ID),
    name: str(spec.Name),
    version: num(rec(service.Version).Index),
    persona: labels[PERSONA_LABEL],
    replicas: num(rec(rec(spec.Mode).Replicated).Replicas),
    node: node ?? null,
    forceUpdate: num(template.ForceUpdate),
  };
}

/** A persona service of this fleet as placement counts it (its memory limit), else null. */
export function readServiceLoad(raw: unknown, fleetId: string): ServiceLoad | null {
  const service = readService(raw, fleetId);
  if (!service) return null;
  const limits = rec(rec(rec(rec(rec(raw).Spec).TaskTemplate).Resources).Limits);
  const bytes = num(limits.MemoryBytes);
  return {
    id: service.id,
    persona: service.persona,
    node: service.node,
    replicas: service.replicas,
    memoryMb: bytes > 0 ? Math.round(bytes / (1024 * 1024)) : UNLIMITED_PERSONA_MB,
  };
}

/** The latest task of a service (by the engine's update time), or null. */
export function latestTask(tasks: TaskInfo[], serviceId: string): TaskInfo | null {
  let latest: TaskInfo | null = null;
  for (const t of tasks) {
    if (t.serviceId === serviceId && (!latest || t.updated > latest.updated)) latest = t;
  }
  return latest;
}

/** The nodes as the waker's API lists them, by hostname. */
export function nodeList(nodes: SwarmNodeInfo[]): NodeStatus[] {
  return nodes
    .map((n) => ({
      hostname: n.hostname,
      ready: n.ready,
      active: n.active,
      memory_mb: n.memoryMb,
      cpus: n.cpus,
      message: n.message,
    }))
    .sort((a, b) => a.hostname.localeCompare(b.hostname));
}

/**
 * Why a running worker is no more: its node's problem, or its service's last task having ended
 * (with its state, exit code and error); null while a task still runs or starts.
 */
export function exitOf(
  serviceId: string,
  nodeProblem: string | null,
  tasks: TaskInfo[],
): ExitInfo | null {
  if (nodeProblem) return { code: null, reason: nodeProblem };
  const mine = tasks.filter((t) => t.serviceId === serviceId);
  if (mine.some((t) => taskPhase(t.state) !== 'ended')) return null;
  const last = latestTask(mine, serviceId);
  const code = last?.exitCode ?? null;
  const detail = last ? `task ${last.state}${code === null ? '' : ` with ${code}`}` : 'no task';
  return { code, reason: `${detail}${last?.error ? `: ${last.error}` : ''}` };
}
