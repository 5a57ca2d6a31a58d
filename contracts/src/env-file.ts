import fs from 'node:fs';
import type Joi from 'joi';

/** Parses `KEY=value` lines; `#` comments, blank lines, optional `export ` and quotes. */
export function parseEnvFile(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (!line || line.startsWith('#')) continue;
    const m = /^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$/.exec(line);
    if (!m) continue;
    let value = m[2] ?? '';
    const quoted = /^(['"])(.*)\1$/.exec(value);
    if (quoted) value = quoted[2] ?? '';
    else value = value.replace(/\s+#.*$/, '');
    out[m[1] as string] = value;
  }
  return out;
}

/**
 * Reads an env file: a missing file is empty; any other failure to read it throws
 * `makeError('cannot read <file>: <why>')`, so each program raises its own configuration error.
 */
export function readEnvFile(
  file: string,
  makeError: (message: string) => Error = (message) => new Error(message),
): Record<string, string> {
  try {
    return parseEnvFile(fs.readFileSync(file, 'utf8'));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw makeError(`cannot read ${file}: ${(err as Error).message}`);
  }
}

/**
 * Validates environment variables against `schema`: the values (converted and defaulted), or
 * `makeError('invalid NAME: why')` naming the first bad variable.
 */
export function validateEnv(
  schema: Joi.ObjectSchema,
  vars: Record<string, string | undefined>,
  makeError: (message: string) => Error,
): Record<string, unknown> {
  const result: Joi.ValidationResult<Record<string, unknown>> = schema.validate(vars);
  if (result.error) {
    const detail = result.error.details[0];
    const name = detail?.path.join('.') ?? 'environment';
    throw makeError(`invalid ${name}: ${detail?.message ?? result.error.message}`);
  }
  return result.value;
}
