import fs from 'node:fs';
import path from 'node:path';
import Joi from 'joi';
import { readEnvFile, validateEnv } from '@persona-browser/contracts';
import type { PageTiming } from './browser/timing';
import { DEFAULT_TIMING } from './browser/timing';
import type { PlatformName } from './identity/platform';
import { PLATFORM_NAMES } from './identity/platform';

/** Everything the worker reads from its environment, validated once at start. */
export interface Config {
  host: string;
  port: number;
  serviceKey: string | null;
  personaDir: string | null;
  /** The persona's name in ping: `PERSONA_NAME`, else the folder's name (null without one). */
  personaName: string | null;
  profileDir: string;
  slowmoMs: number;
  wakerUrl: string;
  visionKeyPaga: string | null;
  visionKeyGratis: string | null;
  chromePath: string | null;
  /** Run Chromium without its sandbox (`CHROME_NO_SANDBOX=true`): an opt-out where the
   * sandbox cannot work (no user namespaces); always the case when running as root. */
  chromeNoSandbox: boolean;
  display: string | null;
  /** The time zone and locale pages tell when the persona has no proxy identity (which wins):
   * `BROWSER_TIMEZONE` (IANA) and `BROWSER_LOCALE` (BCP 47); null keeps the machine's. */
  browserTimezone: string | null;
  browserLocale: string | null;
  /** The system pages tell (`BROWSER_PLATFORM`): null tells the machine's own. */
  browserPlatform: PlatformName | null;
  vncPort: number | null;
  /** Serve the browser's DevTools on this localhost port too (0: any free one), or null. */
  devtoolsPort: number | null;
  /** Media store: unclaimed files are dropped after this long, and may not exceed this size. */
  mediaTtlMs: number;
  mediaCapBytes: number;
  vision: {
    baseUrl: string;
    model: string;
    priceInputPerMTok: number;
    priceOutputPerMTok: number;
    timeoutMs: number;
  };
  /** Where `.env` and `.update-trigger` live, git is asked for the commit and, without a
   * persona, the request log goes. */
  repoRoot: string;
  /** navigate may open `file:` URLs (off by default: they read the worker's own disk). */
  allowFileUrls: boolean;
  /** Check every response against its declared schema and answer 500 on a mismatch (tests). */
  validateResponses: boolean;
  timing: PageTiming;
  /** A person's control through the live view: it outlives their viewer's last WebSocket by
   * `graceMs`; its lease has `leaseTtlS` and is renewed every `renewMs` while they watch. */
  liveControl: { graceMs: number; leaseTtlS: number; renewMs: number };
  /** Folder holding `requests/`: the persona folder, else the repository root. */
  dataDir: string;
  /** Where plugins are discovered at start (`PLUGINS_DIR`, default the repository's `plugins/`). */
  pluginsDir: string;
  /** Seeds plugins' random source (`PLUGIN_SEED`) so that a run can be replayed; else random. */
  pluginSeed: number | null;
  /** The merged environment (.env, persona.env, process): plugin families read settings here. */
  env: Readonly<Record<string, string | undefined>>;
}

export class ConfigError extends Error {}

const configError = (message: string): ConfigError => new ConfigError(message);

const optionalString = Joi.string().allow('').empty('');

const schema = Joi.object({
  HOST: Joi.string().default('0.0.0.0'),
  PORT: Joi.number().integer().min(0).max(65535).default(5000),
  SERVICE_KEY: optionalString,
  PERSONA_DIR: optionalString,
  PERSONA_NAME: optionalString,
  BROWSER_PROFILE: Joi.string().default('./browser-profile'),
  BROWSER_SLOWMO: Joi.number().integer().min(0).max(60000).default(200),
  WAKER_PORT: Joi.number().integer().min(1).max(65535).default(4900),
  WAKER_URL: Joi.string().uri({ scheme: ['http', 'https'] }),
  VISION_API_KEY_PAGA: optionalString,
  VISION_API_KEY_GRATIS: optionalString,
  CHROME_PATH: optionalString,
  CHROME_NO_SANDBOX: Joi.boolean().default(false),
  DISPLAY: optionalString,
  BROWSER_TIMEZONE: optionalString
    .custom((value: string) => {
      // Throws RangeError for a zone the ICU data does not know.
      new Intl.DateTimeFormat('en-US', { timeZone: value });
      return value;
    }, 'IANA time zone')
    .messages({ 'any.custom': '{{#label}} is not a known IANA time zone' }),
  BROWSER_LOCALE: optionalString.pattern(/^[a-z]{2,3}(-[A-Z]{2})?$/).messages({
    'string.pattern.base': '{{#label}} must be a locale such as de-DE',
  }),
  BROWSER_PLATFORM: optionalString.valid(...PLATFORM_NAMES).messages({
    'any.only': `{{#label}} must be one of ${PLATFORM_NAMES.join(', ')}`,
  }),
  VNC_PORT: Joi.number().integer().min(1).max(65535),
  DEVTOOLS_PORT: Joi.number().integer().min(0).max(65535),
  MEDIA_TTL_SECONDS: Joi.number().positive().default(300),
  MEDIA_CAP_MB: Joi.number().positive().default(512),
  VISION_BASE_URL: Joi.string()
    .uri({ scheme: ['http', 'https'] })
    .default('https://generativelanguage.googleapis.com'),
  VISION_MODEL: Joi.string().default('gemini-2.5-flash'),
  VISION_PRICE_INPUT_PER_MTOK: Joi.number().min(0).default(0.3),
  VISION_PRICE_OUTPUT_PER_MTOK: Joi.number().min(0).default(2.5),
  VISION_TIMEOUT_SECONDS: Joi.number().positive().default(60),
  ALLOW_FILE_URLS: Joi.boolean().default(false),
  LOCK_WAIT_SECONDS: Joi.number()
    .positive()
    .default(DEFAULT_TIMING.lockWaitMs / 1000),
  CALL_DEADLINE_SECONDS: Joi.number()
    .positive()
    .default(DEFAULT_TIMING.callDeadlineMs / 1000),
  NAVIGATION_TIMEOUT_SECONDS: Joi.number()
    .positive()
    .default(DEFAULT_TIMING.navigationTimeoutMs / 1000),
  VALIDATE_RESPONSES: Joi.boolean().default(false),
  LIVE_CONTROL_GRACE_SECONDS: Joi.number().min(0).max(3600).default(10),
  LIVE_CONTROL_LEASE_SECONDS: Joi.number().min(1).max(3600).default(60),
  PLUGINS_DIR: optionalString,
  PLUGIN_SEED: Joi.number().integer(),
})
  .unknown(true)
  .prefs({ convert: true, abortEarly: true });

/**
 * Layers: `.env` at the repository root, then `PERSONA_DIR/persona.env` on top; the process
 * environment wins over both, so a caller (the waker, a test) can always override a file.
 * The repository root is `REPO_ROOT` from the environment, else `defaultRoot`.
 */
export function loadConfig(
  env: NodeJS.ProcessEnv,
  defaultRoot: string,
  defaultPluginsDir = path.join(defaultRoot, 'plugins'),
): Config {
  const repoRoot = path.resolve(env.REPO_ROOT || defaultRoot);
  const base = readEnvFile(path.join(repoRoot, '.env'), configError);
  const personaDirRaw = env.PERSONA_DIR ?? base.PERSONA_DIR;
  const persona = personaDirRaw
    ? readEnvFile(path.join(path.resolve(repoRoot, personaDirRaw), 'persona.env'), configError)
    : {};
  const merged: Record<string, string | undefined> = { ...base, ...persona, ...env };
  const v = validateEnv(schema, merged, configError);
  const str = (k: string): string | null => (typeof v[k] === 'string' ? v[k] : null);
  const personaDirSetting = str('PERSONA_DIR');
  const personaDir = personaDirSetting ? path.resolve(repoRoot, personaDirSetting) : null;
  if (personaDir && !fs.existsSync(personaDir)) {
    throw new ConfigError(`invalid PERSONA_DIR: folder ${personaDir} does not exist`);
  }
  return {
    host: v.HOST as string,
    port: v.PORT as number,
    serviceKey: str('SERVICE_KEY'),
    personaDir,
    personaName: personaDir ? (str('PERSONA_NAME') ?? path.basename(personaDir)) : null,
    profileDir: personaDir
      ? path.join(personaDir, 'profile')
      : path.resolve(repoRoot, v.BROWSER_PROFILE as string),
    slowmoMs: v.BROWSER_SLOWMO as number,
    wakerUrl: (str('WAKER_URL') ?? `http://127.0.0.1:${v.WAKER_PORT as number}`).replace(
      /\/+$/,
      '',
    ),
    visionKeyPaga: str('VISION_API_KEY_PAGA'),
    visionKeyGratis: str('VISION_API_KEY_GRATIS'),
    chromePath: str('CHROME_PATH'),
    chromeNoSandbox: v.CHROME_NO_SANDBOX as boolean,
    display: str('DISPLAY'),
    browserTimezone: str('BROWSER_TIMEZONE'),
    browserLocale: str('BROWSER_LOCALE'),
    browserPlatform: str('BROWSER_PLATFORM') as PlatformName | null,
    vncPort: typeof v.VNC_PORT === 'number' ? v.VNC_PORT : null,
    devtoolsPort: typeof v.DEVTOOLS_PORT === 'number' ? v.DEVTOOLS_PORT : null,
    mediaTtlMs: (v.MEDIA_TTL_SECONDS as number) * 1000,
    mediaCapBytes: Math.round((v.MEDIA_CAP_MB as number) * 1024 * 1024),
    vision: {
      baseUrl: (v.VISION_BASE_URL as string).replace(/\/+$/, ''),
      model: v.VISION_MODEL as string,
      priceInputPerMTok: v.VISION_PRICE_INPUT_PER_MTOK as number,
      priceOutputPerMTok: v.VISION_PRICE_OUTPUT_PER_MTOK as number,
      timeoutMs: (v.VISION_TIMEOUT_SECONDS as number) * 1000,
    },
    repoRoot,
    dataDir: personaDir ?? repoRoot,
    pluginsDir: path.resolve(repoRoot, str('PLUGINS_DIR') ?? defaultPluginsDir),
    pluginSeed: typeof v.PLUGIN_SEED === 'number' ? v.PLUGIN_SEED : null,
    env: merged,
    allowFileUrls: v.ALLOW_FILE_URLS as boolean,
    validateResponses: v.VALIDATE_RESPONSES as boolean,
    liveControl: {
      graceMs: (v.LIVE_CONTROL_GRACE_SECONDS as number) * 1000,
      leaseTtlS: v.LIVE_CONTROL_LEASE_SECONDS as number,
      // Renewed every third of the ttl, at most every 10 s.
      renewMs: Math.min(10_000, ((v.LIVE_CONTROL_LEASE_SECONDS as number) * 1000) / 3),
    },
    timing: {
      lockWaitMs: (v.LOCK_WAIT_SECONDS as number) * 1000,
      callDeadlineMs: (v.CALL_DEADLINE_SECONDS as number) * 1000,
      navigationTimeoutMs: (v.NAVIGATION_TIMEOUT_SECONDS as number) * 1000,
    },
  };
}
