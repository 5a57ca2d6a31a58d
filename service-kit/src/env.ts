import fs from 'node:fs';
import path from 'node:path';
import type Joi from 'joi';
import { errnoCode, errorMessage } from './errors';

/** A setting that stops start-up: one line naming the variable or the file. */
export class ConfigError extends Error {}

/** Parses `KEY=value` lines; `#` comments, blank lines, optional `export ` and quotes. */
export function parseEnvFile(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (!line || line.startsWith('#')) continue;
    const m = /^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$/.exec(line);
    if (!m?.[1]) continue;
    let value = m[2] ?? '';
    const quoted = /^(['"])(.*)\1$/.exec(value);
    if (quoted) value = quoted[2] ?? '';
    else value = value.replace(/\s+#.*$/, '');
    out[m[1]] = value;
  }
  return out;
}

/** Reads an env file: a missing file is empty; any other failure to read it is a ConfigError. */
export function readEnvFile(file: string): Record<string, string> {
  try {
    return parseEnvFile(fs.readFileSync(file, 'utf8'));
  } catch (err) {
    if (errnoCode(err) === 'ENOENT') return {};
    throw new ConfigError(`cannot read ${file}: ${errorMessage(err)}`);
  }
}

/** The layers a service's settings come from, merged. */
export interface LayeredEnv {
  /** `REPO_ROOT` from the process environment, else the service's default, absolute. */
  repoRoot: string;
  /** What the files said (`.env`, then any further file on top), without the process's. */
  files: Record<string, string>;
  /** The files with the process environment on top: a caller can always override a file. */
  merged: Record<string, string>;
}

/**
 * The layering every service reads its settings with: `.env` at the repository root, then an
 * optional further file named from what is known so far (the worker's `persona.env`), then the
 * process environment over both.
 */
export function layeredEnv(
  env: NodeJS.ProcessEnv,
  defaultRoot: string,
  further?: (soFar: Record<string, string>) => string | null,
): LayeredEnv {
  const repoRoot = path.resolve(env.REPO_ROOT || defaultRoot);
  const process: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined) process[k] = v;
  let files = readEnvFile(path.join(repoRoot, '.env'));
  const next = further?.({ ...files, ...process });
  if (next) files = { ...files, ...readEnvFile(path.resolve(repoRoot, next)) };
  return { repoRoot, files, merged: { ...files, ...process } };
}

/**
 * Validates variables against a service's schema: the typed values (converted and defaulted),
 * or a ConfigError naming the first bad variable.
 */
export function validateEnv<T>(schema: Joi.ObjectSchema<T>, vars: Record<string, string>): T {
  const result = schema.validate(vars, { convert: true, abortEarly: true, allowUnknown: true });
  if (result.error) {
    const detail = result.error.details[0];
    const name = detail?.path.join('.') || 'environment';
    throw new ConfigError(`invalid ${name}: ${detail?.message ?? result.error.message}`);
  }
  return result.value;
}
