/**
 * The two ways a Swarm service can carry a persona's sleep and wake, timed with the raw engine
 * on a persona service shaped as the driver makes it (personaService):
 *   - scale: the service stays; waking is replicas 0→1, sleeping 1→0;
 *   - create/remove: waking creates the service, sleeping removes it.
 * Up is timed to the task running and on to the worker answering status through an overlay
 * gateway of its own (the waker's front door path, less the waker). Down is timed to the task
 * ended (scale) and to the container gone from the node (remove). Both use one persona folder,
 * so each start finds the same profile, and the two ways alternate, so drift hits both alike.
 */
import fs from 'node:fs';
import path from 'node:path';
import type Docker from 'dockerode';
import { isRecord } from '@persona-browser/service-kit';
import { KEY } from '@persona-browser/testkit/waker';
import { OverlayGateway, TunnelAgent } from '../src/drivers/overlay-tunnel';
import {
  FLEET_LABEL,
  WORKER_PORT,
  personaService,
  serviceSeccompSupported,
  taskPhase,
} from '../src/drivers/swarm-plan';
import type { TaskInfo } from '../src/drivers/swarm-state';
import { readTask } from '../src/drivers/swarm-state';
import { STATUS, get, initialized, sleep } from './swarm-measure';
import { traceStop } from './swarm-trace';

export interface LifecycleInput {
  manager: Docker;
  /** The engine of the node the persona runs on. */
  nodeEngine: Docker;
  node: string;
  image: string;
  network: string;
  /** The node's folder of personas, as the node sees it (the nodes share this disk). */
  dataDir: string;
  fleetId: string;
  repoRoot: string;
  runs: number;
}

export interface UpTimes {
  running_ms: number;
  answered_ms: number;
}

export interface LifecycleFigures {
  scale_up: UpTimes[];
  create_up: UpTimes[];
  /** Replicas 1→0 until the task has ended. */
  scale_down_ms: number[];
  /** `service rm` until the container is gone from the node. */
  remove_down_ms: number[];
  /** The first scale-down's container end and the worker's last lines (ms after the update). */
  stop_trace?: { finished: number; last_lines: string[] };
}

const PERSONA = 'raw';
const TIMEOUT_MS = 120_000;

async function until(what: string, test: () => Promise<boolean>, everyMs = 50): Promise<void> {
  const deadline = Date.now() + TIMEOUT_MS;
  while (!(await test())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${TIMEOUT_MS / 1000} s`);
    await sleep(everyMs);
  }
}

/** Runs the samples; the gateway and both services are removed whatever happens. */
export async function measureLifecycle(input: LifecycleInput): Promise<LifecycleFigures> {
  const { manager, nodeEngine } = input;
  const folder = path.join(input.dataDir, PERSONA);
  fs.mkdirSync(folder, { recursive: true });
  const api = (await manager.version()).ApiVersion;
  const seccomp = serviceSeccompSupported(api)
    ? JSON.stringify(
        JSON.parse(
          fs.readFileSync(path.join(input.repoRoot, 'docker', 'seccomp-chromium.json'), 'utf8'),
        ),
      )
    : null;
  const spec = (fleetId: string, replicas: 0 | 1): Docker.ServiceSpec =>
    personaService({
      fleetId,
      persona: PERSONA,
      image: input.image,
      env: {
        SERVICE_KEY: KEY,
        HOST: '0.0.0.0',
        PORT: String(WORKER_PORT),
        PERSONA_DIR: '/persona',
        PERSONA_NAME: PERSONA,
        REPO_ROOT: '/app',
      },
      node: input.node,
      folder,
      network: input.network,
      memoryLimitMb: null,
      cpus: null,
      seccomp,
      replicas,
    });
  const gateway = new OverlayGateway({
    docker: manager,
    image: input.image,
    name: `pb-${input.fleetId}-gateway`,
    network: input.network,
    labels: { [FLEET_LABEL]: input.fleetId },
  });
  await gateway.start();
  // A new connection for every poll, as the front door's first request after a wake makes.
  const agent = new TunnelAgent(() => gateway.current(), gateway.token, { keepAlive: false });

  const tasks = async (id: string): Promise<TaskInfo[]> =>
    (await manager.listTasks({ filters: { service: [id] } })).map(readTask);
  /** From `t0` (performance.now) to the task running and then to the worker's answer. */
  const upFrom = async (t0: number, id: string, host: string): Promise<UpTimes> => {
    await until(`task of ${host} running`, async () =>
      (await tasks(id)).some((t) => t.desired === 'running' && t.state === 'running'),
    );
    const running = performance.now() - t0;
    await until(`${host} answering`, async () =>
      initialized(
        await get(host, WORKER_PORT, STATUS, agent, 2_000).catch(() => ({
          status: 0,
          ms: 0,
          body: '',
        })),
      ),
    );
    return { running_ms: running, answered_ms: performance.now() - t0 };
  };
  const containersOf = (id: string): Promise<Docker.ContainerInfo[]> =>
    nodeEngine.listContainers({
      all: true,
      filters: { label: [`com.docker.swarm.service.id=${id}`] },
    });

  const scaled = spec(`${input.fleetId}s`, 0);
  const scaledName = scaled.Name ?? '';
  const scaledId = (await manager.createService(scaled)).id;
  const setReplicas = async (n: 0 | 1): Promise<void> => {
    const svc = manager.getService(scaledId);
    const info: unknown = await svc.inspect();
    const version = isRecord(info) && isRecord(info.Version) ? info.Version.Index : undefined;
    if (typeof version !== 'number') throw new Error(`service ${scaledName} has no version`);
    // The spec it was made with, less the count: what `docker service scale` sends.
    await svc.update({ ...scaled, version, Mode: { Replicated: { Replicas: n } } });
  };
  const created = spec(`${input.fleetId}c`, 1);
  const createdName = created.Name ?? '';
  const out: LifecycleFigures = {
    scale_up: [],
    create_up: [],
    scale_down_ms: [],
    remove_down_ms: [],
  };
  try {
    // One start before the samples: Chromium's first run makes the profile.
    for (let i = -1; i < input.runs; i += 1) {
      let t0 = performance.now();
      await setReplicas(1);
      const up = await upFrom(t0, scaledId, scaledName);
      t0 = performance.now();
      const sentAt = Date.now();
      await setReplicas(0);
      await until('scaled task ended', async () =>
        (await tasks(scaledId)).every((t) => taskPhase(t.state) === 'ended'),
      );
      const down = performance.now() - t0;
      // Where a stop's time goes, once: the worker's own last lines tell it.
      if (i === 0) out.stop_trace = await traceStop(nodeEngine, scaledId, sentAt);
      if (i >= 0) {
        out.scale_up.push(up);
        out.scale_down_ms.push(down);
      }

      t0 = performance.now();
      const id = (await manager.createService(created)).id;
      const cUp = await upFrom(t0, id, createdName);
      t0 = performance.now();
      await manager.getService(id).remove();
      await until('removed service container gone', async () => !(await containersOf(id)).length);
      if (i >= 0) {
        out.create_up.push(cUp);
        out.remove_down_ms.push(performance.now() - t0);
      }
    }
  } finally {
    agent.destroy();
    await manager
      .getService(scaledId)
      .remove()
      .catch(() => undefined);
    await manager
      .getService(createdName)
      .remove()
      .catch(() => undefined);
    await gateway.stop();
  }
  return out;
}
