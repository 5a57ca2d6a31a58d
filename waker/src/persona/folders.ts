import fs from 'node:fs';
import path from 'node:path';
import Joi from 'joi';
import type { PersonaMode } from '@persona-browser/contracts';
import { PERSONA_MODES } from '@persona-browser/contracts';
import { errnoCode, parseEnvFile } from '@persona-browser/service-kit';
import { parseCountry } from '../identity/locale';

/** One persona folder as the waker reads it (`persona.env`). */
export interface PersonaSpec {
  name: string;
  /** Absolute path of the persona folder (as this process sees it). */
  dir: string;
  /** Host port the waker serves the persona on. */
  port: number;
  mode: PersonaMode;
  /** Seconds without client activity before a sleepy persona sleeps; null for always-on. */
  idleTimeoutS: number | null;
  memoryLimitMb: number | null;
  cpus: number | null;
  /**
   * PROXY_COUNTRY (sleepy personas only), upper case: each wake gives the persona a fresh proxy
   * identity exiting in this country. Absent for a persona without one.
   */
  proxyCountry?: string;
  /**
   * NODE: the cluster node that holds the persona's folder (Swarm). Absent: the driver places
   * a new persona and the waker records its choice here and in persona.env.
   */
  node?: string;
}

/** A persona folder that cannot run: one line naming the persona and the variable. */
export interface PersonaProblem {
  name: string;
  variable: string;
  message: string;
}

/** A persona's variables as the schema gives them: converted and typed. */
interface PersonaEnv {
  PORT: number;
  MODE: PersonaMode;
  IDLE_TIMEOUT?: number;
  MEMORY_LIMIT_MB?: number;
  CPUS?: number;
  PROXY_COUNTRY?: string;
  NODE?: string;
}

const schema = Joi.object<PersonaEnv>({
  PORT: Joi.number().integer().min(1).max(65535).required(),
  MODE: Joi.string()
    .valid(...PERSONA_MODES)
    .required(),
  IDLE_TIMEOUT: Joi.when('MODE', {
    is: 'sleepy',
    then: Joi.number().positive().required(),
    otherwise: Joi.number().positive(),
  }),
  MEMORY_LIMIT_MB: Joi.number().integer().min(64),
  CPUS: Joi.number().positive().max(1024),
  PROXY_COUNTRY: Joi.when('MODE', {
    is: 'sleepy',
    then: Joi.string().allow('').empty(''),
    otherwise: Joi.any().valid('').empty('').forbidden().messages({
      'any.unknown':
        '"PROXY_COUNTRY" is for sleepy personas only: an identity is made at each wake',
    }),
  }),
  NODE: Joi.string()
    .allow('')
    .empty('')
    .pattern(/^[a-zA-Z0-9][a-zA-Z0-9_.-]*$/)
    .max(253)
    .messages({ 'string.pattern.base': '"NODE" must be a node\'s hostname' }),
})
  .unknown(true)
  .prefs({ convert: true, abortEarly: true });

/** Folder names that become container names and labels. */
const NAME = /^[a-zA-Z0-9][a-zA-Z0-9_.-]*$/;

/** Reads one persona folder; a problem instead of a spec when it cannot run. */
export function readPersona(dir: string): PersonaSpec | PersonaProblem {
  const name = path.basename(dir);
  if (!NAME.test(name)) {
    return { name, variable: 'name', message: 'folder name may hold letters, digits, _ . - only' };
  }
  let text: string;
  try {
    text = fs.readFileSync(path.join(dir, 'persona.env'), 'utf8');
  } catch (err) {
    const missing = errnoCode(err) === 'ENOENT';
    return {
      name,
      variable: 'persona.env',
      message: missing ? 'persona.env is missing' : `cannot read persona.env: ${String(err)}`,
    };
  }
  const result = schema.validate(parseEnvFile(text));
  if (result.error) {
    const detail = result.error.details[0];
    return {
      name,
      variable: detail?.path.join('.') || 'persona.env',
      message: detail?.message ?? result.error.message,
    };
  }
  const value = result.value;
  const mode = value.MODE;
  let proxyCountry: string | undefined;
  if (typeof value.PROXY_COUNTRY === 'string') {
    const parsed = parseCountry(value.PROXY_COUNTRY);
    if ('error' in parsed) {
      return { name, variable: 'PROXY_COUNTRY', message: `"PROXY_COUNTRY" ${parsed.error}` };
    }
    proxyCountry = parsed.country;
  }
  return {
    name,
    dir,
    port: value.PORT,
    mode,
    // The schema requires IDLE_TIMEOUT of a sleepy persona.
    idleTimeoutS: mode === 'sleepy' ? (value.IDLE_TIMEOUT ?? null) : null,
    memoryLimitMb: value.MEMORY_LIMIT_MB ?? null,
    cpus: value.CPUS ?? null,
    ...(proxyCountry ? { proxyCountry } : {}),
    ...(value.NODE ? { node: value.NODE } : {}),
  };
}

/** Variables the waker gives every worker and a persona.env cannot replace. */
const FLEET_OWNED = new Set(['SERVICE_KEY', 'COMMIT_INFO']);

/**
 * The environment a persona's worker starts with: the fleet's (its .env and the waker's), then
 * the persona's own persona.env on top, read at each start so that an edit takes effect at the
 * next wake. A worker lets its process environment win over the files it reads, so a fleet
 * default handed down as a variable would otherwise beat the persona's own setting.
 */
export function personaWorkerEnv(
  dir: string,
  fleetEnv: Readonly<Record<string, string>>,
): Record<string, string> {
  let own: Record<string, string> = {};
  try {
    own = parseEnvFile(fs.readFileSync(path.join(dir, 'persona.env'), 'utf8'));
  } catch {
    /* read by the waker a moment ago; a file removed meanwhile leaves the fleet's values */
  }
  const env = { ...fleetEnv };
  for (const [k, v] of Object.entries(own)) if (!FLEET_OWNED.has(k)) env[k] = v;
  return env;
}

export const isProblem = (p: PersonaSpec | PersonaProblem): p is PersonaProblem => 'variable' in p;

/** Every sub-folder of `personasDir` (hidden ones aside), sorted by name. */
export function discoverPersonas(personasDir: string): {
  specs: PersonaSpec[];
  problems: PersonaProblem[];
} {
  const specs: PersonaSpec[] = [];
  const problems: PersonaProblem[] = [];
  const entries = fs
    .readdirSync(personasDir, { withFileTypes: true })
    .filter((e) => e.isDirectory() && !e.name.startsWith('.'))
    .map((e) => e.name)
    .sort();
  for (const name of entries) {
    const read = readPersona(path.join(personasDir, name));
    if (isProblem(read)) problems.push(read);
    else specs.push(read);
  }
  return { specs, problems };
}
