/**
 * The Swarm driver's calls to the manager's engine that hold no state of the driver's: what the
 * engine is, the fleet's overlay, services made or updated, read back and scaled to none.
 */
import fs from 'node:fs';
import path from 'node:path';
import type Docker from 'dockerode';
import type { Logger } from '@persona-browser/service-kit';
import { errorMessage, isRecord } from '@persona-browser/service-kit';
import type { ImageRef, ServiceLoad } from './swarm-plan';
import { FLEET_LABEL, imageReference, serviceSeccompSupported } from './swarm-plan';
import type { ServiceInfo, TaskInfo } from './swarm-state';
import { readService, readServiceLoad, readTask } from './swarm-state';
import { DriverError } from './types';

/** The engine's own words for a refusal (its JSON `message`), else the error's. */
export function messageOf(err: unknown): string {
  const json = isRecord(err) ? err.json : undefined;
  return isRecord(json) && typeof json.message === 'string' ? json.message : errorMessage(err);
}

/** The HTTP status of the engine's refusal (404: no such service), if it was one. */
export const statusOf = (err: unknown): number | undefined =>
  isRecord(err) && typeof err.statusCode === 'number' ? err.statusCode : undefined;

/** The manager's address in the swarm (workers reach the waker there); refuses a non-manager. */
export async function managerAddress(docker: Docker): Promise<string> {
  let info: unknown;
  try {
    info = await docker.info();
  } catch (err) {
    throw new DriverError(`cannot reach the Docker engine: ${messageOf(err)}`);
  }
  const swarm = isRecord(info) && isRecord(info.Swarm) ? info.Swarm : {};
  if (swarm.ControlAvailable !== true || typeof swarm.NodeAddr !== 'string') {
    throw new DriverError(
      'WAKER_DRIVER=swarm needs this Docker engine to be a Swarm manager ' +
        '(docker swarm init, or run the waker on a manager)',
    );
  }
  return swarm.NodeAddr;
}

/**
 * The seccomp profile a service carries, where the engine takes one; null (and a warning) on
 * older engines, whose persona containers keep CAP_SYS_ADMIN instead (see personaService).
 */
export async function serviceSeccomp(
  docker: Docker,
  repoRoot: string,
  logger: Logger,
): Promise<string | null> {
  const api = (await docker.version()).ApiVersion;
  if (!serviceSeccompSupported(api)) {
    logger.warn(
      `this engine (API ${api}) cannot give a Swarm service a seccomp profile: persona ` +
        "containers keep CAP_SYS_ADMIN in their bounding set so that Docker's default profile " +
        "allows Chromium's sandbox; the image's entry point drops it before the worker starts",
    );
    return null;
  }
  const file = path.join(repoRoot, 'docker', 'seccomp-chromium.json');
  try {
    return JSON.stringify(JSON.parse(fs.readFileSync(file, 'utf8')));
  } catch (err) {
    throw new DriverError(`cannot read the seccomp profile at ${file}: ${errorMessage(err)}`);
  }
}

/** The fleet's overlay: made attachable when missing; an existing one must be attachable. */
export async function ensureOverlay(docker: Docker, name: string, fleetId: string): Promise<void> {
  let info: unknown = null;
  try {
    info = await docker.getNetwork(name).inspect();
  } catch (err) {
    if (statusOf(err) !== 404) {
      throw new DriverError(`cannot read network ${name}: ${messageOf(err)}`);
    }
  }
  if (isRecord(info)) {
    if (info.Driver !== 'overlay' || info.Attachable !== true) {
      throw new DriverError(
        `network ${name} must be an attachable overlay (docker network create -d overlay ` +
          `--attachable ${name}); it is driver ${String(info.Driver)}, attachable ${String(info.Attachable)}`,
      );
    }
    return;
  }
  try {
    await docker.createNetwork({
      Name: name,
      Driver: 'overlay',
      Attachable: true,
      CheckDuplicate: true,
      Labels: { [FLEET_LABEL]: fleetId },
    });
  } catch (err) {
    throw new DriverError(`cannot create overlay network ${name}: ${messageOf(err)}`);
  }
}

/** A service as `spec` says: made when missing, updated to the spec when it is there. */
export async function putService(docker: Docker, spec: Docker.ServiceSpec): Promise<void> {
  const name = spec.Name ?? '';
  try {
    const raw: unknown = await docker.getService(name).inspect();
    const version = isRecord(raw) && isRecord(raw.Version) ? raw.Version.Index : 0;
    await docker.getService(name).update({ version, ...spec });
  } catch (err) {
    if (statusOf(err) !== 404) {
      throw new DriverError(`cannot update service ${name}: ${messageOf(err)}`);
    }
    await docker.createService(spec).catch((e: unknown) => {
      throw new DriverError(`cannot create service ${name}: ${messageOf(e)}`);
    });
  }
}

/** The tasks of these services, read. */
export async function tasksOf(docker: Docker, serviceIds: string[]): Promise<TaskInfo[]> {
  if (!serviceIds.length) return [];
  const raw = await docker.listTasks({ filters: { service: serviceIds } });
  return raw.map(readTask);
}

/** A persona service of this fleet by name; null when there is none. */
export async function inspectService(
  docker: Docker,
  name: string,
  fleetId: string,
): Promise<ServiceInfo | null> {
  try {
    return readService(await docker.getService(name).inspect(), fleetId);
  } catch (err) {
    if (statusOf(err) === 404) return null;
    throw new DriverError(`cannot read service ${name}: ${messageOf(err)}`);
  }
}

/** Scales a service to no replica; false when the service is gone already. */
export async function scaleToNone(docker: Docker, id: string): Promise<boolean> {
  const service = docker.getService(id);
  let raw: unknown;
  try {
    raw = await service.inspect();
  } catch (err) {
    if (statusOf(err) === 404) return false;
    throw err;
  }
  const spec = isRecord(raw) && isRecord(raw.Spec) ? raw.Spec : {};
  const version = isRecord(raw) && isRecord(raw.Version) ? raw.Version.Index : 0;
  const replicas =
    isRecord(spec.Mode) && isRecord(spec.Mode.Replicated) ? spec.Mode.Replicated.Replicas : 0;
  // Already at none: an update would only bump the service's version.
  if (replicas !== 0) {
    await service.update({ version, ...spec, Mode: { Replicated: { Replicas: 0 } } });
  }
  return true;
}

/**
 * How services name the image (see imageReference): the manager's engine says whether it holds
 * the image and under which id and registry digests. Not there: its name, which nodes pull.
 */
export async function resolveImage(docker: Docker, name: string): Promise<ImageRef> {
  let raw: unknown = null;
  try {
    raw = await docker.getImage(name).inspect();
  } catch (err) {
    if (statusOf(err) !== 404) {
      throw new DriverError(`cannot read image ${name} on the manager: ${messageOf(err)}`);
    }
  }
  if (!isRecord(raw) || typeof raw.Id !== 'string') return imageReference(name, null);
  const digests = Array.isArray(raw.RepoDigests)
    ? raw.RepoDigests.filter((d): d is string => typeof d === 'string')
    : [];
  return imageReference(name, { Id: raw.Id, RepoDigests: digests });
}

/** The persona services of this fleet, as placement counts them, and their tasks. */
export async function fleetLoad(
  docker: Docker,
  fleetId: string,
): Promise<{ services: ServiceLoad[]; tasks: TaskInfo[] }> {
  const raw = await docker.listServices({ filters: { label: [`${FLEET_LABEL}=${fleetId}`] } });
  const services = raw
    .map((s) => readServiceLoad(s, fleetId))
    .filter((s): s is ServiceLoad => s !== null);
  return {
    services,
    tasks: await tasksOf(
      docker,
      services.map((s) => s.id),
    ),
  };
}
