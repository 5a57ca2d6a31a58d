/**
 * One folder-pipe step as a short-lived Swarm service: one task, never restarted, pinned to a
 * node, the node's data folder mounted at /data. The waker learns how it ended from the task's
 * status (state, exit code) and what it found from the result line in its logs.
 */
import type Docker from 'dockerode';
import { errorMessage, isRecord } from '@persona-browser/service-kit';
import type { PipeEnv, PipeMode } from './protocol';
import { DATA_MOUNT, PIPE_SCRIPT, resultOf } from './protocol';
import { taskPhase } from '../drivers/swarm-plan';
import { readTask } from '../drivers/swarm-state';

export const PIPE_ROLE_LABEL = 'persona-browser.folder-pipe';
export const PIPE_FLEET_LABEL = 'persona-browser.folder-pipe.fleet';

export interface OneShotSpec {
  /** The service's name (a DNS label: the sender reaches the receiver by it). */
  name: string;
  mode: PipeMode;
  /** The hostname of the node it runs on. */
  node: string;
  /** That node's data folder, mounted at /data. */
  dataDir: string;
  image: string;
  fleetId: string;
  env: PipeEnv;
  /** The overlay, for the two ends of a stream. */
  network?: string;
}

/** Where a task is: Swarm's state, its error, its exit code once it has one. */
export interface TaskStatus {
  state: string;
  err: string;
  exitCode: number | null;
}

export const hasEnded = (s: TaskStatus): boolean => taskPhase(s.state) === 'ended';

const statusOf = (err: unknown): number | undefined =>
  isRecord(err) && typeof err.statusCode === 'number' ? err.statusCode : undefined;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** A task from the engine's list, read by shape. */
function taskStatus(raw: unknown): TaskStatus | null {
  if (!isRecord(raw) || !isRecord(raw.Status)) return null;
  const task = readTask(raw);
  return { state: task.state || 'unknown', err: task.error, exitCode: task.exitCode };
}

/** Splits the engine's multiplexed log stream (8-byte frame headers) into stdout and stderr. */
function demux(buf: Buffer): { stdout: string; stderr: string } {
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  let at = 0;
  while (at + 8 <= buf.length) {
    const size = buf.readUInt32BE(at + 4);
    const frame = buf.subarray(at + 8, at + 8 + size);
    (buf[at] === 2 ? err : out).push(frame);
    at += 8 + size;
  }
  return { stdout: Buffer.concat(out).toString(), stderr: Buffer.concat(err).toString() };
}

export class OneShot {
  private constructor(
    private readonly docker: Docker,
    readonly spec: OneShotSpec,
    private readonly id: string,
  ) {}

  static async start(docker: Docker, spec: OneShotSpec): Promise<OneShot> {
    const env = Object.entries(spec.env).map(([k, v]) => `${k}=${String(v)}`);
    const service = await docker.createService({
      Name: spec.name,
      Labels: { [PIPE_ROLE_LABEL]: spec.mode, [PIPE_FLEET_LABEL]: spec.fleetId },
      TaskTemplate: {
        ContainerSpec: {
          Image: spec.image,
          // tini forwards the stop signal: a receiver stopped removes what it unpacked.
          Command: ['tini', '--', 'node', PIPE_SCRIPT, spec.mode],
          Env: env,
          // Root keeps every owner and mode of the folder.
          User: '0:0',
          Mounts: [{ Type: 'bind', Source: spec.dataDir, Target: DATA_MOUNT }],
        },
        RestartPolicy: { Condition: 'none' },
        Placement: { Constraints: [`node.hostname==${spec.node}`] },
        ...(spec.network ? { Networks: [{ Target: spec.network }] } : {}),
      },
      Mode: { Replicated: { Replicas: 1 } },
      EndpointSpec: { Mode: 'dnsrr' },
    });
    return new OneShot(docker, spec, service.id);
  }

  /** The task's status now (`new` while Swarm has not made it yet). */
  async status(): Promise<TaskStatus> {
    const tasks = await this.docker.listTasks({ filters: { service: [this.id] } });
    const statuses = tasks.map(taskStatus).filter((s): s is TaskStatus => s !== null);
    return statuses[0] ?? { state: 'new', err: '', exitCode: null };
  }

  /** Polls until the task ended or the deadline passed; resolves with the last status seen. */
  async waitEnded(deadline: number): Promise<TaskStatus> {
    for (;;) {
      const s = await this.status();
      if (hasEnded(s) || Date.now() > deadline) return s;
      await sleep(250);
    }
  }

  /** The task's output; the result line can lag a moment behind the task's end. */
  async output(): Promise<{ stdout: string; stderr: string }> {
    let seen = { stdout: '', stderr: '' };
    for (let i = 0; i < 10; i++) {
      const logs: unknown = await this.docker
        .getService(this.id)
        .logs({ stdout: true, stderr: true, follow: false });
      if (Buffer.isBuffer(logs)) seen = demux(logs);
      if (resultOf(seen.stdout) || seen.stderr.trim()) return seen;
      await sleep(300);
    }
    return seen;
  }

  /** The task's own words for its failure: its stderr, else Swarm's error for it. */
  async failure(s: TaskStatus): Promise<string> {
    const stderr = await this.output().then(
      (o) => o.stderr.trim(),
      (err: unknown) => `(its logs: ${errorMessage(err)})`,
    );
    const code = s.exitCode === null ? '' : `, exit ${s.exitCode}`;
    return `${stderr || s.err || 'no output'} (task ${s.state}${code})`;
  }

  /**
   * Stops the task and waits until its container has stopped (a receiver stopped mid-stream
   * removes its folder first), then removes the service. Never throws for a service gone.
   * Resolves with the task's last status (null: the service was gone).
   */
  async remove(): Promise<TaskStatus | null> {
    const service = this.docker.getService(this.id);
    try {
      let last = await this.status();
      if (!hasEnded(last)) {
        const spec: unknown = await service.inspect();
        const version = isRecord(spec) && isRecord(spec.Version) ? spec.Version.Index : undefined;
        const body = isRecord(spec) && isRecord(spec.Spec) ? spec.Spec : {};
        const scaled = { ...body, Mode: { Replicated: { Replicas: 0 } } };
        await service.update({ _query: { version }, _body: scaled });
        last = await this.waitEnded(Date.now() + 20_000);
      }
      await service.remove();
      return last;
    } catch (err) {
      if (statusOf(err) !== 404) throw err;
      return null;
    }
  }
}

/** Removes every folder-pipe service of a fleet (what an interrupted move left). */
export async function removePipeServices(docker: Docker, fleetId: string): Promise<number> {
  const filters = { label: [`${PIPE_FLEET_LABEL}=${fleetId}`] };
  const services = await docker.listServices({ filters });
  for (const s of services) {
    if (s.ID)
      await docker
        .getService(s.ID)
        .remove()
        .catch(() => undefined);
  }
  return services.length;
}
