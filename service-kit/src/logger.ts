import winston from 'winston';
import { SecretValues } from './secrets';

export type Logger = winston.Logger;

const SECRET_KEY = /(key|token|password|pwd|secret|authorization|lease|code)$/i;
/** `key=…`, `token=…` and the like inside a URL's query or fragment (a live view link). */
const SECRET_PARAM =
  /([?&#;](?:[\w.-]*key|[\w.-]*token|password|pwd|secret|code|lease)=)[^&#\s"']*/gi;

/** A URL (or any text) with the values of secret-looking query and fragment fields hidden. */
export const redactUrlSecrets = (text: string): string =>
  text.replace(SECRET_PARAM, '$1[redacted]');

/** Replaces values of secret-looking fields (and the given literal secrets) with `[redacted]`. */
export function redact(value: unknown, secrets: readonly string[], depth = 0): unknown {
  if (typeof value === 'string') {
    return secrets.reduce(
      (s, secret) => (secret ? s.split(secret).join('[redacted]') : s),
      redactUrlSecrets(value),
    );
  }
  if (value instanceof Error) return { name: value.name, message: redact(value.message, secrets) };
  if (!value || typeof value !== 'object' || depth > 4) return value;
  if (Array.isArray(value)) return value.map((v) => redact(v, secrets, depth + 1));
  return redactFields(value, secrets, depth);
}

/** An object's fields redacted as `redact` does: a secret-looking field's text is hidden. */
function redactFields(
  value: object,
  secrets: readonly string[],
  depth = 0,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    out[k] =
      SECRET_KEY.test(k) && typeof v === 'string' ? '[redacted]' : redact(v, secrets, depth + 1);
  }
  return out;
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
