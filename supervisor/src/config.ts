import fs from 'node:fs';
import path from 'node:path';
import Joi from 'joi';
import { ConfigError, layeredEnv, validateEnv } from '@persona-browser/service-kit';

/** Everything the supervisor reads from its environment (and `.env`), validated once. */
export interface SupervisorConfig {
  /** The git checkout it updates; the waker runs from it and reads `.env` there. */
  repoRoot: string;
  updateIntervalS: number;
  healthTimeoutS: number;
  /** Port of the supervisor's own status API (the waker relays it on its port too). */
  port: number;
  wakerPort: number;
  serviceKey: string | null;
  /** Where the supervisor keeps what it must remember across restarts (git-ignored). */
  stateDir: string;
  /** The waker's command line; default: `node <repo>/waker/dist/main.js`. */
  wakerCommand: string[];
  /**
   * Whether the fleet runs persona containers, so an update may have to rebuild the image;
   * `registry` (PERSONA_REGISTRY, `host:port`) is where the nodes of a cluster pull it from.
   */
  docker: { image: string; baseImage: string | null; registry: string | null } | null;
}

export const DOCKER_SOCKET = '/var/run/docker.sock';

/** The supervisor's variables as its schema gives them: converted, defaulted, typed. */
interface SupervisorEnv {
  UPDATE_INTERVAL: number;
  HEALTH_TIMEOUT: number;
  SUPERVISOR_PORT: number;
  WAKER_PORT: number;
  SERVICE_KEY?: string;
  SUPERVISOR_STATE_DIR: string;
  WAKER_DRIVER?: 'docker' | 'process' | 'swarm';
  PERSONA_IMAGE: string;
  PERSONA_BASE_IMAGE?: string;
  PERSONA_REGISTRY?: string;
}

const schema = Joi.object<SupervisorEnv, true>({
  UPDATE_INTERVAL: Joi.number().integer().min(1).max(86_400).default(10),
  HEALTH_TIMEOUT: Joi.number().integer().min(1).max(3_600).default(90),
  SUPERVISOR_PORT: Joi.number().integer().min(1).max(65535).default(4901),
  WAKER_PORT: Joi.number().integer().min(1).max(65535).default(4900),
  SERVICE_KEY: Joi.string().allow('').empty(''),
  SUPERVISOR_STATE_DIR: Joi.string().default('.supervisor'),
  WAKER_DRIVER: Joi.string().valid('docker', 'process', 'swarm'),
  PERSONA_IMAGE: Joi.string().default('persona-browser:latest'),
  PERSONA_BASE_IMAGE: Joi.string().allow('').empty(''),
  // A registry's host (and port), as image names begin with it: `registry.lan:5000`.
  PERSONA_REGISTRY: Joi.string()
    .allow('')
    .empty('')
    .pattern(/^[a-zA-Z0-9.-]+(:[0-9]{1,5})?(\/[a-z0-9._-]+)*$/)
    .messages({
      'string.pattern.base':
        '"PERSONA_REGISTRY" must be a registry host and port such as registry.lan:5000',
    }),
}).unknown(true);

/** `.env` at the checkout's root with the process environment on top, as the waker reads it. */
export function loadSupervisorConfig(
  env: NodeJS.ProcessEnv,
  defaultRoot: string,
  dockerSocket = DOCKER_SOCKET,
): SupervisorConfig {
  const { repoRoot, merged } = layeredEnv(env, defaultRoot);
  if (!fs.existsSync(path.join(repoRoot, '.git'))) {
    throw new ConfigError(`invalid REPO_ROOT: ${repoRoot} is not a git checkout`);
  }
  const v = validateEnv(schema, merged);
  if (v.SUPERVISOR_PORT === v.WAKER_PORT) {
    throw new ConfigError("invalid SUPERVISOR_PORT: it is the waker's port (WAKER_PORT)");
  }
  // A swarm's personas run the image too: it is built on the manager the supervisor runs on.
  const dockerDriver =
    v.WAKER_DRIVER === 'docker' ||
    v.WAKER_DRIVER === 'swarm' ||
    (v.WAKER_DRIVER === undefined && fs.existsSync(dockerSocket));
  if (v.PERSONA_REGISTRY && !dockerDriver) {
    throw new ConfigError(
      'invalid PERSONA_REGISTRY: the fleet runs no persona containers (WAKER_DRIVER=process)',
    );
  }
  return {
    repoRoot,
    updateIntervalS: v.UPDATE_INTERVAL,
    healthTimeoutS: v.HEALTH_TIMEOUT,
    port: v.SUPERVISOR_PORT,
    wakerPort: v.WAKER_PORT,
    serviceKey: v.SERVICE_KEY ?? null,
    stateDir: path.resolve(repoRoot, v.SUPERVISOR_STATE_DIR),
    wakerCommand: [process.execPath, path.join(repoRoot, 'waker', 'dist', 'main.js')],
    docker: dockerDriver
      ? {
          image: v.PERSONA_IMAGE,
          baseImage: v.PERSONA_BASE_IMAGE ?? null,
          registry: v.PERSONA_REGISTRY ?? null,
        }
      : null,
  };
}
