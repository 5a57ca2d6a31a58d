import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import Docker from 'dockerode';
import type { Logger } from '@persona-browser/service-kit';
import { errorMessage, isRecord } from '@persona-browser/service-kit';
import { hostPathTranslator } from './host-path';
import {
  FLEET_LABEL,
  PERSONA_LABEL,
  SHM_BYTES,
  STOP_TIMEOUT_S,
  WORKER_PORT,
  containerDevices,
  containerEnv,
} from './worker-container';
import type { ExitInfo, FoundInstance, InstanceHandle, InstanceSpec, RuntimeDriver } from './types';
import { DriverError } from './types';

export interface DockerDriverOptions {
  fleetId: string;
  image: string;
  repoRoot: string;
  wakerPort: number;
  logger: Logger;
  /** Defaults to the local engine's socket. */
  docker?: Docker;
}

/** The HTTP status of the engine's refusal (404: no such container or image), if it was one. */
const statusOf = (err: unknown): number | undefined =>
  isRecord(err) && typeof err.statusCode === 'number' ? err.statusCode : undefined;

/** The engine's own words for a refusal (its JSON `message`), else the error's. */
function messageOf(err: unknown): string {
  const json = isRecord(err) ? err.json : undefined;
  return isRecord(json) && typeof json.message === 'string' ? json.message : errorMessage(err);
}

/** A container's `die` event from the engine's event stream: its id and exit code, else null. */
function dieEvent(line: string): { id: string; exitCode: unknown } | null {
  let ev: unknown;
  try {
    ev = JSON.parse(line);
  } catch {
    return null;
  }
  if (!isRecord(ev) || ev.Action !== 'die' || !isRecord(ev.Actor)) return null;
  const { ID, Attributes } = ev.Actor;
  if (typeof ID !== 'string') return null;
  return { id: ID, exitCode: isRecord(Attributes) ? Attributes.exitCode : undefined };
}

/** Ignores the "already stopped / already gone" answers of the engine. */
async function quietly(work: Promise<unknown>): Promise<void> {
  try {
    await work;
  } catch (err) {
    const status = statusOf(err);
    if (status !== 304 && status !== 404 && status !== 409) throw err;
  }
}

/** One container per persona on the local Docker engine. */
export class DockerDriver implements RuntimeDriver {
  readonly kind = 'docker';
  readonly canPause = true;
  readonly canAdopt = true;
  private readonly listeners: Array<(h: InstanceHandle, info: ExitInfo) => void> = [];
  /** Containers this waker runs, by id; `stopping` silences their exit event. */
  private readonly live = new Map<string, { handle: InstanceHandle; stopping: boolean }>();
  private events: NodeJS.ReadableStream | null = null;
  private closed = false;

  private constructor(
    private readonly opts: DockerDriverOptions,
    private readonly docker: Docker,
    private readonly seccomp: string,
    private readonly hostPath: (p: string) => string,
  ) {}

  /** Reads the seccomp profile, reaches the engine and learns the host paths of our mounts. */
  static async create(opts: DockerDriverOptions): Promise<DockerDriver> {
    const file = path.join(opts.repoRoot, 'docker', 'seccomp-chromium.json');
    let seccomp: string;
    try {
      seccomp = JSON.stringify(JSON.parse(fs.readFileSync(file, 'utf8')));
    } catch (err) {
      throw new DriverError(
        `cannot read the seccomp profile for Chromium at ${file}: ${errorMessage(err)}`,
      );
    }
    const docker = opts.docker ?? new Docker();
    try {
      await docker.ping();
    } catch (err) {
      throw new DriverError(`cannot reach the Docker engine: ${messageOf(err)}`);
    }
    const driver = new DockerDriver(opts, docker, seccomp, await hostPathTranslator(docker));
    await driver.watchEvents();
    return driver;
  }

  containerName(persona: string): string {
    return `pb-${this.opts.fleetId}-${persona}`;
  }

  async start(spec: InstanceSpec): Promise<InstanceHandle> {
    const name = this.containerName(spec.name);
    await this.freeName(name);
    const env: Record<string, string> = {
      ...spec.env,
      ...containerEnv(spec.name, `http://host.docker.internal:${this.opts.wakerPort}`),
    };
    let container: Docker.Container;
    try {
      container = await this.docker.createContainer({
        name,
        Image: this.opts.image,
        Labels: { [PERSONA_LABEL]: spec.name, [FLEET_LABEL]: this.opts.fleetId },
        Env: Object.entries(env).map(([k, v]) => `${k}=${v}`),
        StopTimeout: STOP_TIMEOUT_S,
        HostConfig: {
          Binds: [`${this.hostPath(spec.personaDir)}:/persona`],
          ShmSize: SHM_BYTES,
          SecurityOpt: [`seccomp=${this.seccomp}`],
          ExtraHosts: ['host.docker.internal:host-gateway'],
          // GPU=dri: the render node, for hardware GL (the worker checks it can open it).
          Devices: containerDevices(env),
          ...(spec.memoryLimitMb ? { Memory: spec.memoryLimitMb * 1024 * 1024 } : {}),
          ...(spec.cpus ? { NanoCpus: Math.round(spec.cpus * 1e9) } : {}),
        },
      });
    } catch (err) {
      if (statusOf(err) === 404) {
        throw new DriverError(
          `image ${this.opts.image} not found (build it, or set PERSONA_IMAGE): ${messageOf(err)}`,
        );
      }
      const gpu = env.GPU === 'dri' ? ' (GPU=dri: does this host have /dev/dri?)' : '';
      throw new DriverError(`cannot create container ${name}: ${messageOf(err)}${gpu}`);
    }
    try {
      await container.start();
      const handle = await this.handleOf(container, spec.name);
      this.live.set(handle.id, { handle, stopping: false });
      return handle;
    } catch (err) {
      await quietly(container.remove({ force: true }));
      throw new DriverError(`cannot start container ${name}: ${messageOf(err)}`);
    }
  }

  /**
   * A leftover of the same name (a crash of an earlier waker, a removal still in progress after
   * a `die`) would block the create: remove it and wait until the name is free.
   */
  private async freeName(name: string): Promise<void> {
    const until = Date.now() + 15_000;
    for (;;) {
      try {
        await this.docker.getContainer(name).remove({ force: true });
      } catch (err) {
        if (statusOf(err) === 404) return;
        if (statusOf(err) !== 409 || Date.now() > until) throw err;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  private async handleOf(container: Docker.Container, persona: string): Promise<InstanceHandle> {
    const info = await container.inspect();
    const networks = Object.values(info.NetworkSettings.Networks ?? {});
    const ip = networks.find((n) => n.IPAddress)?.IPAddress ?? '';
    if (!ip) throw new DriverError(`container ${info.Name} has no IP address`);
    return {
      id: info.Id,
      persona,
      address: { host: ip, port: WORKER_PORT },
      pid: info.State.Pid || null,
    };
  }

  async stop(handle: InstanceHandle): Promise<void> {
    const entry = this.live.get(handle.id);
    if (entry) entry.stopping = true;
    const container = this.docker.getContainer(handle.id);
    try {
      const info = await container.inspect();
      if (info.State.Paused) await quietly(container.unpause());
      await quietly(container.stop({ t: STOP_TIMEOUT_S }));
    } catch (err) {
      if (statusOf(err) !== 404) throw err;
    }
    await quietly(container.remove({ force: true }));
    this.live.delete(handle.id);
  }

  async pause(handle: InstanceHandle): Promise<void> {
    await this.docker.getContainer(handle.id).pause();
  }

  async unpause(handle: InstanceHandle): Promise<void> {
    await quietly(this.docker.getContainer(handle.id).unpause());
  }

  async findExisting(): Promise<FoundInstance[]> {
    const list = await this.docker.listContainers({
      all: true,
      filters: { label: [`${FLEET_LABEL}=${this.opts.fleetId}`] },
    });
    const found: FoundInstance[] = [];
    for (const c of list) {
      const persona = c.Labels[PERSONA_LABEL] ?? '';
      const running = c.State === 'running' || c.State === 'paused';
      let handle: InstanceHandle = {
        id: c.Id,
        persona,
        address: { host: '', port: WORKER_PORT },
        pid: null,
      };
      if (running) {
        try {
          handle = await this.handleOf(this.docker.getContainer(c.Id), persona);
          this.live.set(handle.id, { handle, stopping: false });
        } catch {
          /* reported as not running: the fleet removes it */
        }
      }
      found.push({
        handle,
        running: running && handle.address.host !== '',
        paused: c.State === 'paused',
      });
    }
    return found;
  }

  onExit(listener: (h: InstanceHandle, info: ExitInfo) => void): void {
    this.listeners.push(listener);
  }

  /** The engine's `die` events for this fleet's containers, reconnected if the stream ends. */
  private async watchEvents(): Promise<void> {
    const stream = await this.docker.getEvents({
      filters: {
        type: ['container'],
        event: ['die', 'oom'],
        label: [`${FLEET_LABEL}=${this.opts.fleetId}`],
      },
    });
    this.events = stream;
    let buf = '';
    stream.on('data', (chunk: Buffer) => {
      buf += chunk.toString();
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl).trim();
        buf = buf.slice(nl + 1);
        if (line) this.onEvent(line);
      }
    });
    const again = (): void => {
      if (this.closed) return;
      this.events = null;
      setTimeout(() => {
        if (this.closed) return;
        this.watchEvents().catch((err: unknown) =>
          this.opts.logger.error('docker events lost', { error: messageOf(err) }),
        );
      }, 1_000);
    };
    stream.once('end', again);
    stream.once('error', again);
  }

  private onEvent(line: string): void {
    const died = dieEvent(line);
    const entry = died && this.live.get(died.id);
    if (!died || !entry) return;
    this.live.delete(died.id);
    if (entry.stopping) return;
    const code = Number(died.exitCode ?? NaN);
    const info: ExitInfo = {
      code: Number.isFinite(code) ? code : null,
      reason: `container exited with ${Number.isFinite(code) ? code : 'unknown code'}`,
    };
    // The dead container keeps its name: remove it so the next start can reuse it.
    void quietly(this.docker.getContainer(died.id).remove({ force: true })).catch(() => undefined);
    for (const l of this.listeners) l(entry.handle, info);
  }

  async close(): Promise<void> {
    this.closed = true;
    // The engine's event stream is an HTTP response, a Readable that can be ended at once.
    if (this.events instanceof Readable) this.events.destroy();
  }
}
