/**
 * Where a wake's time goes on a Swarm node, read back after the wake from the engines' own
 * records (all on this machine's clock): when Swarm made the task, when the node's engine
 * created and started the container, and when the worker inside logged its first line and that
 * it listened. Each is given in ms after the request was sent. (The service's own UpdatedAt is
 * no phase: Swarm writes the service again when an update's monitor period ends.)
 */
import Docker from 'dockerode';

/** Docker's timestamps carry nanoseconds; Date.parse wants at most milliseconds. */
function when(iso: unknown): number {
  if (typeof iso !== 'string') return NaN;
  return Date.parse(iso.replace(/(\.\d{3})\d*/, '$1'));
}

const rec = (v: unknown): Record<string, unknown> =>
  typeof v === 'object' && v !== null ? Object.fromEntries(Object.entries(v)) : {};

export const PHASES = [
  'task_created',
  'container_created',
  'container_started',
  'first_log_line',
  'worker_listening',
  'answered',
] as const;

export type WakeTrace = Record<(typeof PHASES)[number], number>;

/** The engine of a node, from its `DOCKER_HOST` (a unix socket). */
export function engineOf(dockerHost: string): Docker {
  return new Docker({ socketPath: dockerHost.replace(/^unix:\/\//, '') });
}

/**
 * The phases of the wake of `service` whose request went out at `sentAt` (epoch ms) and was
 * answered `answeredMs` later. `node` is the engine of the node the task ran on.
 */
export async function traceWake(
  manager: Docker,
  node: Docker,
  service: string,
  sentAt: number,
  answeredMs: number,
): Promise<WakeTrace> {
  const tasks = (await manager.listTasks({ filters: { service: [service] } })).map(rec);
  tasks.sort((a, b) => when(b.CreatedAt) - when(a.CreatedAt));
  const task = tasks[0] ?? {};
  const containerId = rec(rec(task.Status).ContainerStatus).ContainerID;
  let created = NaN;
  let started = NaN;
  let firstLine = NaN;
  let listening = NaN;
  if (typeof containerId === 'string' && containerId) {
    const c = node.getContainer(containerId);
    const info = await c.inspect();
    created = when(info.Created);
    started = when(info.State.StartedAt);
    const raw = await c.logs({ stdout: true, stderr: true, timestamps: true, follow: false });
    // Multiplexed frames: an 8-byte header before each chunk; the text is what matters here.
    const lines = raw
      .toString('latin1')
      .split('\n')
      .map((l) => l.replace(/^[\s\S]{0,8}?(\d{4}-\d\d-\d\dT)/, '$1'))
      .filter((l) => /^\d{4}-\d\d-\d\dT/.test(l));
    firstLine = when(lines[0]?.split(' ')[0]);
    listening = when(lines.find((l) => /listening/i.test(l))?.split(' ')[0]);
  }
  const after = (t: number): number => Math.round(t - sentAt);
  return {
    task_created: after(when(task.CreatedAt)),
    container_created: after(created),
    container_started: after(started),
    first_log_line: after(firstLine),
    worker_listening: after(listening),
    answered: Math.round(answeredMs),
  };
}

/**
 * How a stop ended on the node: when the newest container of `serviceId` finished (ms after
 * `sentAt`, epoch ms) and the worker's last log lines with their times after `sentAt`.
 */
export async function traceStop(
  node: Docker,
  serviceId: string,
  sentAt: number,
): Promise<{ finished: number; last_lines: string[] }> {
  const list = await node.listContainers({
    all: true,
    filters: { label: [`com.docker.swarm.service.id=${serviceId}`] },
  });
  list.sort((a, b) => b.Created - a.Created);
  const id = list[0]?.Id;
  if (!id) return { finished: NaN, last_lines: [] };
  const c = node.getContainer(id);
  const info = await c.inspect();
  const raw = await c.logs({
    stdout: true,
    stderr: true,
    timestamps: true,
    tail: 6,
    follow: false,
  });
  const lines = raw
    .toString('latin1')
    .split('\n')
    .map((l) => /(\d{4}-\d\d-\d\dT\S+) (.*)$/.exec(l))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => `+${Math.round(when(m[1]) - sentAt)} ms ${(m[2] ?? '').slice(0, 160)}`);
  return { finished: Math.round(when(info.State.FinishedAt) - sentAt), last_lines: lines };
}
