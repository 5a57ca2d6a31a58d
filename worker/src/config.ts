import fs from 'node:fs';
import path from 'node:path';
import Joi from 'joi';
import {
  ConfigError,
  DEFAULT_FAILURES_PER_MINUTE,
  layeredEnv,
  validateEnv,
} from '@persona-browser/service-kit';
import type { PageTiming } from './browser/timing';
import { DEFAULT_TIMING } from './browser/timing';
import type { BrandClaim, PlatformName } from './identity/platform';
import { BRAND_CLAIMS, PLATFORM_NAMES } from './identity/platform';

/** Everything the worker reads from its environment, validated once at start. */
export interface Config {
  host: string;
  port: number;
  serviceKey: string | null;
  /** Failed credentials one client address may present in a minute before it is answered 429
   * (`AUTH_FAILURES_PER_MINUTE`; 0: never). The right credential is always served. */
  authFailuresPerMinute: number;
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
  /** `GPU=dri`: hardware GL on the machine's render node (/dev/dri) instead of SwiftShader. */
  gpu: 'dri' | null;
  /** The brand pages claim (`BROWSER_BRAND`): `real` tells the browser's own (a Chromium says
   * Chromium; measured the better default, `npm run bench:brand`), `google-chrome` claims it. */
  browserBrand: BrandClaim;
  vncPort: number | null;
  /** Serve the browser's DevTools on this localhost port too (0: any free one), or null. */
  devtoolsPort: number | null;
  /** Keep outside DevTools clients' `Runtime.enable` from their pages, telling them the pages'
   * execution contexts instead (`DEVTOOLS_QUIET_RUNTIME`, on by default; off passes it on). */
  devtoolsQuietRuntime: boolean;
  /** Unsent bytes a DevTools client may leave queued before it is dropped
   * (`DEVTOOLS_CLIENT_BUFFER_MB`). */
  devtoolsClientBufferBytes: number;
  /** Agents' MCP sessions: the ttl of their leases (renewed every third of it while the session
   * lives) and how long a session may go without a request before it ends. */
  mcp: { leaseTtlS: number; idleMs: number };
  /** Media store: unclaimed files are dropped after this long, and may not exceed this size. */
  mediaTtlMs: number;
  mediaCapBytes: number;
  /** Failure bundles of plugin calls (`dataDir/bundles/`): dropped past this age, and the
   * oldest first past this size. */
  bundleRetentionMs: number;
  bundleCapBytes: number;
  /** Screen recordings (`dataDir/recordings/`) of plugin calls (`RECORDING`) and of whole
   * leases (`RECORDING_LEASES`): frames a second, and retention as the bundles have it. Null:
   * neither is on. */
  /** What the frames of every recording under way may hold in memory together
   * (`RECORDING_MEMORY_MB`); a recording that would pass it stops growing (truncated). */
  recordingMemoryBytes: number;
  recording: {
    calls: boolean;
    leases: boolean;
    fps: number;
    retentionMs: number;
    capBytes: number;
  } | null;
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

/** The worker's variables as its schema gives them: converted, defaulted, typed. */
interface WorkerEnv {
  HOST: string;
  PORT: number;
  SERVICE_KEY?: string;
  AUTH_FAILURES_PER_MINUTE: number;
  PERSONA_DIR?: string;
  PERSONA_NAME?: string;
  BROWSER_PROFILE: string;
  BROWSER_SLOWMO: number;
  WAKER_PORT: number;
  WAKER_URL?: string;
  VISION_API_KEY_PAGA?: string;
  VISION_API_KEY_GRATIS?: string;
  CHROME_PATH?: string;
  CHROME_NO_SANDBOX: boolean;
  DISPLAY?: string;
  BROWSER_TIMEZONE?: string;
  BROWSER_LOCALE?: string;
  BROWSER_PLATFORM?: PlatformName;
  GPU?: 'dri' | 'none';
  BROWSER_BRAND: BrandClaim;
  VNC_PORT?: number;
  DEVTOOLS_PORT?: number;
  DEVTOOLS_QUIET_RUNTIME: boolean;
  DEVTOOLS_CLIENT_BUFFER_MB: number;
  MCP_LEASE_SECONDS: number;
  MCP_IDLE_SECONDS: number;
  MEDIA_TTL_SECONDS: number;
  MEDIA_CAP_MB: number;
  BUNDLE_RETENTION_DAYS: number;
  BUNDLE_CAP_MB: number;
  RECORDING: boolean;
  RECORDING_LEASES: boolean;
  RECORDING_FPS: number;
  RECORDING_RETENTION_DAYS: number;
  RECORDING_CAP_MB: number;
  RECORDING_MEMORY_MB: number;
  VISION_BASE_URL: string;
  VISION_MODEL: string;
  VISION_PRICE_INPUT_PER_MTOK: number;
  VISION_PRICE_OUTPUT_PER_MTOK: number;
  VISION_TIMEOUT_SECONDS: number;
  ALLOW_FILE_URLS: boolean;
  LOCK_WAIT_SECONDS: number;
  CALL_DEADLINE_SECONDS: number;
  NAVIGATION_TIMEOUT_SECONDS: number;
  NAVIGATE_PAUSE_MS: number;
  VALIDATE_RESPONSES: boolean;
  LIVE_CONTROL_GRACE_SECONDS: number;
  LIVE_CONTROL_LEASE_SECONDS: number;
  PLUGINS_DIR?: string;
  PLUGIN_SEED?: number;
}

const optionalString = Joi.string().allow('').empty('');

const schema = Joi.object<WorkerEnv, true>({
  HOST: Joi.string().default('0.0.0.0'),
  PORT: Joi.number().integer().min(0).max(65535).default(5000),
  SERVICE_KEY: optionalString,
  AUTH_FAILURES_PER_MINUTE: Joi.number()
    .integer()
    .min(0)
    .max(100_000)
    .default(DEFAULT_FAILURES_PER_MINUTE),
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
  GPU: optionalString.valid('dri', 'none').messages({
    'any.only': '{{#label}} must be dri (the render node under /dev/dri) or none',
  }),
  BROWSER_BRAND: optionalString
    .valid(...BRAND_CLAIMS)
    .default('real')
    .messages({ 'any.only': `{{#label}} must be one of ${BRAND_CLAIMS.join(', ')}` }),
  VNC_PORT: Joi.number().integer().min(1).max(65535),
  DEVTOOLS_PORT: Joi.number().integer().min(0).max(65535),
  DEVTOOLS_QUIET_RUNTIME: Joi.boolean().default(true),
  // A client that reads keeps its queue near empty, and one message always goes onto an empty
  // queue (a full-page screenshot may be tens of MB by itself): 32 MB is only reached by a
  // client that stopped reading, and a few such clients stay small beside the ~500 MB a
  // persona is budgeted (FLEET_MEMORY_DEFAULT_MB).
  DEVTOOLS_CLIENT_BUFFER_MB: Joi.number().positive().default(32),
  MCP_LEASE_SECONDS: Joi.number().min(3).max(3600).default(120),
  MCP_IDLE_SECONDS: Joi.number().min(1).max(86_400).default(600),
  MEDIA_TTL_SECONDS: Joi.number().positive().default(300),
  MEDIA_CAP_MB: Joi.number().positive().default(512),
  BUNDLE_RETENTION_DAYS: Joi.number().positive().default(14),
  BUNDLE_CAP_MB: Joi.number().min(0).default(200),
  RECORDING: Joi.boolean().default(false),
  RECORDING_LEASES: Joi.boolean().default(false),
  RECORDING_FPS: Joi.number().min(0.2).max(10).default(2),
  RECORDING_RETENTION_DAYS: Joi.number().positive().default(3),
  RECORDING_CAP_MB: Joi.number().min(0).default(200),
  // A persona is budgeted ~500 MB (FLEET_MEMORY_DEFAULT_MB; a bare one measures 380 to 510):
  // frames in memory add at most a quarter of that. 128 MB holds about 6 minutes of a page
  // that keeps changing (20.8 MB a minute at 2 frames a second) and hours of a still one,
  // shared by every recording under way.
  RECORDING_MEMORY_MB: Joi.number().positive().default(128),
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
  // The pause before a navigation, in ms as BROWSER_SLOWMO: a person's, by default; a persona
  // that only visits sites of its own may drop it (0). A minute caps it, as it does slowmo.
  NAVIGATE_PAUSE_MS: Joi.number()
    .integer()
    .min(0)
    .max(60_000)
    .default(DEFAULT_TIMING.navigatePauseMs),
  VALIDATE_RESPONSES: Joi.boolean().default(false),
  LIVE_CONTROL_GRACE_SECONDS: Joi.number().min(0).max(3600).default(10),
  LIVE_CONTROL_LEASE_SECONDS: Joi.number().min(1).max(3600).default(60),
  PLUGINS_DIR: optionalString,
  PLUGIN_SEED: Joi.number().integer(),
}).unknown(true);

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
  const { repoRoot, merged } = layeredEnv(env, defaultRoot, (soFar) =>
    soFar.PERSONA_DIR ? path.join(soFar.PERSONA_DIR, 'persona.env') : null,
  );
  const v = validateEnv(schema, merged);
  const personaDir = v.PERSONA_DIR ? path.resolve(repoRoot, v.PERSONA_DIR) : null;
  if (personaDir && !fs.existsSync(personaDir)) {
    throw new ConfigError(`invalid PERSONA_DIR: folder ${personaDir} does not exist`);
  }
  const liveLeaseS = v.LIVE_CONTROL_LEASE_SECONDS;
  return {
    host: v.HOST,
    port: v.PORT,
    serviceKey: v.SERVICE_KEY ?? null,
    authFailuresPerMinute: v.AUTH_FAILURES_PER_MINUTE,
    personaDir,
    personaName: personaDir ? (v.PERSONA_NAME ?? path.basename(personaDir)) : null,
    profileDir: personaDir
      ? path.join(personaDir, 'profile')
      : path.resolve(repoRoot, v.BROWSER_PROFILE),
    slowmoMs: v.BROWSER_SLOWMO,
    wakerUrl: (v.WAKER_URL ?? `http://127.0.0.1:${v.WAKER_PORT}`).replace(/\/+$/, ''),
    visionKeyPaga: v.VISION_API_KEY_PAGA ?? null,
    visionKeyGratis: v.VISION_API_KEY_GRATIS ?? null,
    chromePath: v.CHROME_PATH ?? null,
    chromeNoSandbox: v.CHROME_NO_SANDBOX,
    display: v.DISPLAY ?? null,
    browserTimezone: v.BROWSER_TIMEZONE ?? null,
    browserLocale: v.BROWSER_LOCALE ?? null,
    browserPlatform: v.BROWSER_PLATFORM ?? null,
    gpu: v.GPU === 'dri' ? 'dri' : null,
    browserBrand: v.BROWSER_BRAND,
    vncPort: v.VNC_PORT ?? null,
    devtoolsPort: v.DEVTOOLS_PORT ?? null,
    devtoolsQuietRuntime: v.DEVTOOLS_QUIET_RUNTIME,
    devtoolsClientBufferBytes: Math.round(v.DEVTOOLS_CLIENT_BUFFER_MB * 1024 * 1024),
    recordingMemoryBytes: Math.round(v.RECORDING_MEMORY_MB * 1024 * 1024),
    mcp: { leaseTtlS: v.MCP_LEASE_SECONDS, idleMs: v.MCP_IDLE_SECONDS * 1000 },
    mediaTtlMs: v.MEDIA_TTL_SECONDS * 1000,
    mediaCapBytes: Math.round(v.MEDIA_CAP_MB * 1024 * 1024),
    bundleRetentionMs: v.BUNDLE_RETENTION_DAYS * 86_400_000,
    bundleCapBytes: Math.round(v.BUNDLE_CAP_MB * 1024 * 1024),
    recording:
      v.RECORDING || v.RECORDING_LEASES
        ? {
            calls: v.RECORDING,
            leases: v.RECORDING_LEASES,
            fps: v.RECORDING_FPS,
            retentionMs: v.RECORDING_RETENTION_DAYS * 86_400_000,
            capBytes: Math.round(v.RECORDING_CAP_MB * 1024 * 1024),
          }
        : null,
    vision: {
      baseUrl: v.VISION_BASE_URL.replace(/\/+$/, ''),
      model: v.VISION_MODEL,
      priceInputPerMTok: v.VISION_PRICE_INPUT_PER_MTOK,
      priceOutputPerMTok: v.VISION_PRICE_OUTPUT_PER_MTOK,
      timeoutMs: v.VISION_TIMEOUT_SECONDS * 1000,
    },
    repoRoot,
    dataDir: personaDir ?? repoRoot,
    pluginsDir: path.resolve(repoRoot, v.PLUGINS_DIR ?? defaultPluginsDir),
    pluginSeed: v.PLUGIN_SEED ?? null,
    env: merged,
    allowFileUrls: v.ALLOW_FILE_URLS,
    validateResponses: v.VALIDATE_RESPONSES,
    liveControl: {
      graceMs: v.LIVE_CONTROL_GRACE_SECONDS * 1000,
      leaseTtlS: liveLeaseS,
      // Renewed every third of the ttl, at most every 10 s.
      renewMs: Math.min(10_000, (liveLeaseS * 1000) / 3),
    },
    timing: {
      lockWaitMs: v.LOCK_WAIT_SECONDS * 1000,
      callDeadlineMs: v.CALL_DEADLINE_SECONDS * 1000,
      navigationTimeoutMs: v.NAVIGATION_TIMEOUT_SECONDS * 1000,
      navigatePauseMs: v.NAVIGATE_PAUSE_MS,
    },
  };
}
