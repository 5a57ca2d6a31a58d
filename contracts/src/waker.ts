import Joi from 'joi';
import type { CommitInfo } from './ping';
import { commitSchema } from './ping';

export const PERSONA_MODES = ['always-on', 'sleepy'] as const;
export type PersonaMode = (typeof PERSONA_MODES)[number];

export const PERSONA_STATES = ['running', 'sleeping', 'waking', 'stopping', 'crashed'] as const;
export type PersonaState = (typeof PERSONA_STATES)[number];

/**
 * How deep a persona sleeps: `paused` (its worker frozen, its memory held; a wake takes
 * milliseconds), `light` (its worker kept with its browser closed; a wake starts the browser),
 * `deep` (nothing kept; a wake starts a worker).
 */
export const SLEEP_DEPTHS = ['paused', 'light', 'deep'] as const;
export type SleepDepth = (typeof SLEEP_DEPTHS)[number];

/** One row of the waker's `GET /api/personas`. */
export interface PersonaInfo {
  name: string;
  /** The host port the waker serves this persona on. */
  port: number;
  mode: PersonaMode;
  state: PersonaState;
  /** How deep it sleeps while `sleeping`; null otherwise. */
  depth: SleepDepth | null;
  /** ISO 8601: when the persona entered `state`. */
  since: string;
  /** The commit the running worker reported in its ping; null while down or unknown. */
  commit: CommitInfo | null;
  /** Seconds since the last client request through the port finished; null while one runs. */
  idle_seconds: number | null;
  /** ISO 8601 of the last client request through the port, or null if none yet. */
  last_request: string | null;
  /** Why the persona is crashed (the last start or stop failed, its worker died), else null. */
  error: string | null;
  /**
   * ISO 8601: when the waker tries again by itself (the back-off's next start, or the next stop
   * of a worker whose stop failed), else null.
   */
  retry_at: string | null;
  /** The persona's proxy identity (a sleepy persona with PROXY_COUNTRY), else null. */
  proxy: ProxyStatus | null;
  /**
   * The cluster node that holds the persona (WAKER_DRIVER=swarm), else null. When that node is
   * down, `error` says so and names it.
   */
  node: string | null;
}

/**
 * A persona's proxy as the waker's API shows it. No credential is ever part of it.
 */
export interface ProxyStatus {
  /** PROXY_COUNTRY, upper case. */
  country: string;
  /** The exit address of the current (or last) identity; null before the first one. */
  exit_ip: string | null;
  /** The proxy session of the current (or last) identity; null before the first one. */
  session: string | null;
  /** The worker's `proxy_errors` at the last ping; null while it is down or not yet read. */
  proxy_errors: number | null;
  /** True when `proxy_errors` grew between the last two readings. */
  failing: boolean;
}

export const proxyStatusSchema = Joi.object<ProxyStatus, true>({
  country: Joi.string()
    .pattern(/^[A-Z]{2}$/)
    .required(),
  exit_ip: Joi.string().ip({ cidr: 'forbidden' }).allow(null).required(),
  session: Joi.string().allow(null).required(),
  proxy_errors: Joi.number().integer().min(0).allow(null).required(),
  failing: Joi.boolean().required(),
}).label('PersonaProxy');

export interface PersonaList {
  personas: PersonaInfo[];
}

export const personaInfoSchema = Joi.object<PersonaInfo, true>({
  name: Joi.string().required(),
  port: Joi.number().integer().min(1).max(65535).required(),
  mode: Joi.string()
    .valid(...PERSONA_MODES)
    .required(),
  state: Joi.string()
    .valid(...PERSONA_STATES)
    .required(),
  depth: Joi.string()
    .valid(...SLEEP_DEPTHS)
    .allow(null)
    .required(),
  since: Joi.string().isoDate().required(),
  commit: commitSchema.allow(null).required(),
  idle_seconds: Joi.number().integer().min(0).allow(null).required(),
  last_request: Joi.string().isoDate().allow(null).required(),
  error: Joi.string().allow(null).required(),
  retry_at: Joi.string().isoDate().allow(null).required(),
  proxy: proxyStatusSchema.allow(null).required(),
  node: Joi.string().allow(null).required(),
}).label('Persona');

export const personaListSchema = Joi.object<PersonaList, true>({
  personas: Joi.array().items(personaInfoSchema).required(),
}).label('PersonaList');
