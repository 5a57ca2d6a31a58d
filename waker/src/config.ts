import fs from 'node:fs';
import path from 'node:path';
import Joi from 'joi';
import { ConfigError, layeredEnv, validateEnv } from '@persona-browser/service-kit';
import type { MemoryEnv, MemorySettings } from './memory/config';
import { MEMORY_SCHEMA, memorySettings } from './memory/config';
import {
  DEFAULT_GEOIP_BASE_URL,
  DEFAULT_PROXY_SERVER,
  DEFAULT_USERNAME_TEMPLATE,
  templateProblem,
} from './identity/make';

export type DriverKind = 'docker' | 'process' | 'swarm';

/**
 * How the waker makes proxy identities for personas with PROXY_COUNTRY. The account and the
 * token are the waker's alone: no worker, log line or API answer ever holds them.
 */
export interface IdentitySettings {
  /** `http://host:port` of the proxy gateway (PROXY_SERVER). */
  proxyServer: string;
  /** PROXY_USERNAME_TEMPLATE: `{username}`, `{country}` (lower case) and `{session}`. */
  usernameTemplate: string;
  /** GEOIP_BASE_URL: the lookup is `GET {base}/json[?token=GEOIP_TOKEN]` through the session. */
  geoipBaseUrl: string;
  proxyUsername: string | null;
  proxyPassword: string | null;
  geoipToken: string | null;
}

/** Everything the waker reads from its environment, validated once at start. */
export interface WakerConfig {
  port: number;
  /** Absolute path of the folder holding one sub-folder per persona. */
  personasDir: string;
  serviceKey: string | null;
  metricsIntervalS: number;
  metricsWindowS: number;
  driver: DriverKind;
  image: string;
  fleetId: string;
  repoRoot: string;
  /**
   * Seconds a sleepy persona stays paused (docker pause) after IDLE_TIMEOUT before it goes
   * deeper (light sleep, or stopped); 0: no pause. A paused persona wakes in milliseconds.
   */
  pauseSeconds: number;
  /**
   * Seconds a sleepy persona sleeps lightly (its worker kept, its browser closed) before it is
   * stopped, after IDLE_TIMEOUT or the pause; 0 skips light sleep. It wakes in about a second.
   */
  lightSleepSeconds: number;
  /** Failed credentials one address may present in a minute before it meets 429 (0: no limit). */
  authFailuresPerMinute: number;
  /**
   * How long a start-up step that fails (the engine, the listing of old workers) is retried with
   * back-off before the waker stops what started and exits non-zero for its supervisor.
   */
  startRetryS: number;
  /**
   * What every worker is given: the variables of `.env` at REPO_ROOT (the process environment
   * wins for those) and SERVICE_KEY, less the waker-only secrets. Never the rest of the
   * waker's own environment.
   */
  workerEnv: Record<string, string>;
  /** Where the supervisor that started this waker serves its status (SUPERVISOR_URL), or null. */
  supervisorUrl: string | null;
  /**
   * The supervisor's pid (PB_SUPERVISOR_PID), or null: while set, the waker shuts down once it
   * is no longer that process's child, so a killed supervisor leaves no fleet behind.
   */
  supervisorPid: number | null;
  identity: IdentitySettings;
  /** WAKER_DRIVER=swarm: the overlay the workers are on, and their folders on each node. */
  swarm: { network: string; dataDir: string };
  /** The memory budget of the personas (memory/config.ts). */
  memory: MemorySettings;
  /**
   * Workers that may start at once on each node (a storm of wakes starts a few at a time); null
   * when not set: each node's own cores (this host's on a single server).
   */
  wakeConcurrency: number | null;
  /** How long a start may wait for its turn before its caller meets 503 with Retry-After. */
  wakeQueueS: number;
}

export const DOCKER_SOCKET = '/var/run/docker.sock';

/** The proxy account and the GeoIP token are the waker's alone; no worker is handed them. */
const WAKER_ONLY = new Set(['PROXY_USERNAME', 'PROXY_PASSWORD', 'GEOIP_TOKEN']);

/** The waker's variables as its schema gives them: converted, defaulted, typed. */
interface WakerEnv extends MemoryEnv {
  WAKER_PORT: number;
  PERSONAS_DIR: string;
  SERVICE_KEY?: string;
  METRICS_INTERVAL: number;
  METRICS_WINDOW: number;
  WAKER_DRIVER?: DriverKind;
  PERSONA_IMAGE: string;
  FLEET_ID: string;
  WAKER_PAUSE_SECONDS: number;
  LIGHT_SLEEP_SECONDS: number;
  AUTH_FAILURES_PER_MINUTE: number;
  WAKER_START_RETRY_S: number;
  WAKER_WAKE_CONCURRENCY?: number;
  WAKER_WAKE_QUEUE_S: number;
  SUPERVISOR_URL?: string;
  PB_SUPERVISOR_PID?: number;
  PROXY_SERVER: string;
  PROXY_USERNAME_TEMPLATE: string;
  GEOIP_BASE_URL: string;
  PROXY_USERNAME?: string;
  PROXY_PASSWORD?: string;
  GEOIP_TOKEN?: string;
  SWARM_NETWORK: string;
  SWARM_DATA_DIR: string;
}

const schema = Joi.object<WakerEnv, true>({
  WAKER_PORT: Joi.number().integer().min(1).max(65535).default(4900),
  PERSONAS_DIR: Joi.string().default('./personas'),
  SERVICE_KEY: Joi.string().allow('').empty(''),
  METRICS_INTERVAL: Joi.number().integer().min(1).max(3600).default(15),
  METRICS_WINDOW: Joi.number()
    .integer()
    .min(Joi.ref('METRICS_INTERVAL'))
    .default(600)
    .messages({ 'number.min': '"METRICS_WINDOW" must be at least METRICS_INTERVAL' }),
  WAKER_DRIVER: Joi.string().valid('docker', 'process', 'swarm'),
  PERSONA_IMAGE: Joi.string().default('persona-browser:latest'),
  FLEET_ID: Joi.string()
    .pattern(/^[a-zA-Z0-9][a-zA-Z0-9_.-]*$/)
    .max(40)
    .default('default')
    .messages({ 'string.pattern.base': '"FLEET_ID" may hold letters, digits, _ . - only' }),
  WAKER_PAUSE_SECONDS: Joi.number().min(0).default(0),
  LIGHT_SLEEP_SECONDS: Joi.number()
    .min(0)
    .max(30 * 86_400)
    .default(0),
  AUTH_FAILURES_PER_MINUTE: Joi.number().integer().min(0).max(100000).default(20),
  WAKER_START_RETRY_S: Joi.number().min(0).max(3600).default(60),
  WAKER_WAKE_CONCURRENCY: Joi.number().integer().min(1).max(1000).allow('').empty(''),
  WAKER_WAKE_QUEUE_S: Joi.number().min(0).max(3600).allow('').empty('').default(60),
  SUPERVISOR_URL: Joi.string()
    .allow('')
    .empty('')
    .uri({ scheme: ['http', 'https'] })
    .messages({
      'string.uri': '"SUPERVISOR_URL" must be an http(s) URL such as http://127.0.0.1:4901',
      'string.uriCustomScheme':
        '"SUPERVISOR_URL" must be an http(s) URL such as http://127.0.0.1:4901',
    }),
  PB_SUPERVISOR_PID: Joi.number().integer().min(1).allow('').empty(''),
  PROXY_SERVER: Joi.string()
    .allow('')
    .empty('')
    .uri({ scheme: ['http'] })
    .default(DEFAULT_PROXY_SERVER)
    .messages({
      'string.uri': '"PROXY_SERVER" must be an http URL such as http://brd.superproxy.io:33335',
      'string.uriCustomScheme':
        '"PROXY_SERVER" must be an http URL such as http://brd.superproxy.io:33335',
    }),
  PROXY_USERNAME_TEMPLATE: Joi.string().allow('').empty('').default(DEFAULT_USERNAME_TEMPLATE),
  GEOIP_BASE_URL: Joi.string()
    .allow('')
    .empty('')
    .uri({ scheme: ['http', 'https'] })
    .default(DEFAULT_GEOIP_BASE_URL)
    .messages({
      'string.uri': '"GEOIP_BASE_URL" must be an http(s) URL such as https://ipinfo.io',
      'string.uriCustomScheme': '"GEOIP_BASE_URL" must be an http(s) URL such as https://ipinfo.io',
    }),
  PROXY_USERNAME: Joi.string().allow('').empty(''),
  PROXY_PASSWORD: Joi.string().allow('').empty(''),
  GEOIP_TOKEN: Joi.string().allow('').empty(''),
  SWARM_NETWORK: Joi.string()
    .pattern(/^[a-zA-Z0-9][a-zA-Z0-9_.-]*$/)
    .allow('')
    .empty('')
    .default('persona-browser')
    .messages({ 'string.pattern.base': '"SWARM_NETWORK" may hold letters, digits, _ . - only' }),
  SWARM_DATA_DIR: Joi.string()
    .pattern(/^\//)
    .allow('')
    .empty('')
    .default('/var/lib/persona-browser/personas')
    .messages({
      'string.pattern.base': '"SWARM_DATA_DIR" must be an absolute path (on every node)',
    }),
  ...MEMORY_SCHEMA,
}).unknown(true);

/**
 * `.env` at the repository root, with the process environment on top. The repository root is
 * `REPO_ROOT`, else `defaultRoot`; `PERSONAS_DIR` is relative to it.
 */
export function loadWakerConfig(
  env: NodeJS.ProcessEnv,
  defaultRoot: string,
  dockerSocket = DOCKER_SOCKET,
): WakerConfig {
  const { repoRoot, files, merged } = layeredEnv(env, defaultRoot);
  const workerEnv: Record<string, string> = {};
  for (const k of Object.keys(files)) {
    const value = merged[k];
    if (!WAKER_ONLY.has(k) && value !== undefined) workerEnv[k] = value;
  }
  const v = validateEnv(schema, merged);
  // Checked here, not in the schema: Joi would read the template's braces as its own.
  const templateIssue = templateProblem(v.PROXY_USERNAME_TEMPLATE);
  if (templateIssue) throw new ConfigError(`invalid PROXY_USERNAME_TEMPLATE: ${templateIssue}`);
  const personasDir = path.resolve(repoRoot, v.PERSONAS_DIR);
  if (!fs.existsSync(personasDir) || !fs.statSync(personasDir).isDirectory()) {
    throw new ConfigError(`invalid PERSONAS_DIR: folder ${personasDir} does not exist`);
  }
  const driver = v.WAKER_DRIVER ?? (fs.existsSync(dockerSocket) ? 'docker' : 'process');
  return {
    port: v.WAKER_PORT,
    personasDir,
    serviceKey: v.SERVICE_KEY ?? null,
    metricsIntervalS: v.METRICS_INTERVAL,
    metricsWindowS: v.METRICS_WINDOW,
    driver,
    image: v.PERSONA_IMAGE,
    fleetId: v.FLEET_ID,
    repoRoot,
    pauseSeconds: v.WAKER_PAUSE_SECONDS,
    lightSleepSeconds: v.LIGHT_SLEEP_SECONDS,
    authFailuresPerMinute: v.AUTH_FAILURES_PER_MINUTE,
    startRetryS: v.WAKER_START_RETRY_S,
    workerEnv: v.SERVICE_KEY ? { ...workerEnv, SERVICE_KEY: v.SERVICE_KEY } : workerEnv,
    supervisorUrl: v.SUPERVISOR_URL?.replace(/\/+$/, '') ?? null,
    supervisorPid: v.PB_SUPERVISOR_PID ?? null,
    identity: {
      proxyServer: v.PROXY_SERVER.replace(/\/+$/, ''),
      usernameTemplate: v.PROXY_USERNAME_TEMPLATE,
      geoipBaseUrl: v.GEOIP_BASE_URL.replace(/\/+$/, ''),
      proxyUsername: v.PROXY_USERNAME ?? null,
      proxyPassword: v.PROXY_PASSWORD ?? null,
      geoipToken: v.GEOIP_TOKEN ?? null,
    },
    swarm: { network: v.SWARM_NETWORK, dataDir: v.SWARM_DATA_DIR },
    memory: memorySettings(v),
    wakeConcurrency: v.WAKER_WAKE_CONCURRENCY ?? null,
    wakeQueueS: v.WAKER_WAKE_QUEUE_S,
  };
}
