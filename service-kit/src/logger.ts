import winston from 'winston';
import type { RedactRules } from './redact-tree';
import { redactTree } from './redact-tree';
import { isRecord } from './guards';
import { SecretValues } from './secrets';

export type Logger = winston.Logger;

const SECRET_KEY = /(key|token|password|pwd|secret|authorization|lease|code)$/i;
/** `key=…`, `token=…` and the like inside a URL's query or fragment (a live view link). */
const SECRET_PARAM =
  /([?&#;](?:[\w.-]*key|[\w.-]*token|password|pwd|secret|code|lease)=)[^&#\s"']*/gi;

/** A URL (or any text) with the values of secret-looking query and fragment fields hidden. */
export const redactUrlSecrets = (text: string): string =>
  text.replace(SECRET_PARAM, '$1[redacted]');

/** Values one log line may hold: past them the rest are replaced (a line is not a dump). */
export const MAX_LOGGED_VALUES = 20_000;

/** The rules of `redact`: literal secrets and URL secrets hidden, secret-named fields blanked. */
const logRules = (secrets: readonly string[]): RedactRules => ({
  text: (value) =>
    secrets.reduce(
      (s, secret) => (secret ? s.split(secret).join('[redacted]') : s),
      redactUrlSecrets(value),
    ),
  field: (key, value) =>
    SECRET_KEY.test(key) && typeof value === 'string' ? '[redacted]' : undefined,
  shape: (value) => (value instanceof Error ? { name: value.name, message: value.message } : value),
  maxNodes: MAX_LOGGED_VALUES,
});

/**
 * Replaces values of secret-looking fields (and the given literal secrets) with `[redacted]`,
 * at any depth (see redact-tree.ts: cycles, very deep and very large values are replaced, never
 * passed through).
 */
export function redact(value: unknown, secrets: readonly string[]): unknown {
  return redactTree(value, logRules(secrets));
}

/** An object's fields redacted as `redact` does: a secret-looking field's text is hidden. */
function redactFields(value: object, secrets: readonly string[]): Record<string, unknown> {
  const out = redactTree(value, logRules(secrets));
  return isRecord(out) ? out : {};
}

export interface LoggerOptions {
  /** Values no line may show: the service key and the like, and those learned later. */
  secrets: SecretValues | Array<string | null | undefined>;
  /** Added to every line (`service: "supervisor"`) where several programs share one output. */
  service?: string;
  level?: string;
}

/**
 * JSON lines on stdout, the one format of every program of the product; known secrets, and
 * the values of secret-looking fields and URL parameters, never reach them.
 */
export function createLogger(options: LoggerOptions): Logger {
  const { secrets, service, level = process.env.LOG_LEVEL ?? 'info' } = options;
  const known = secrets instanceof SecretValues ? secrets : new SecretValues(secrets);
  const scrub = winston.format((info) =>
    Object.assign(info, redactFields({ ...info }, known.list())),
  );
  return winston.createLogger({
    level,
    ...(service ? { defaultMeta: { service } } : {}),
    format: winston.format.combine(scrub(), winston.format.timestamp(), winston.format.json()),
    transports: [new winston.transports.Console()],
  });
}
