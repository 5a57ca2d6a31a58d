import fs from 'node:fs';
import path from 'node:path';
import { IDENTITY_FILE, identitySchema } from '@persona-browser/contracts';
import type { ProxyIdentity } from '@persona-browser/contracts';
import { errnoCode } from '@persona-browser/service-kit';
import { errorMessage } from '../errors';

/** The identity file exists but cannot be used: the worker must not start (never go direct). */
export class IdentityError extends Error {}

/**
 * The persona's proxy identity, read and validated once at start; null when the persona has
 * none (no persona folder, or no file in it). A file that is unreadable, not JSON or off the
 * schema throws one line naming the file and the field. Messages never quote the file's text:
 * it holds the proxy password.
 */
export function readIdentity(personaDir: string | null): ProxyIdentity | null {
  if (!personaDir) return null;
  const file = path.join(personaDir, IDENTITY_FILE);
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    if (errnoCode(err) === 'ENOENT') return null;
    throw new IdentityError(`proxy identity ${file} cannot be read: ${errnoCode(err) ?? 'error'}`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    // V8 quotes a snippet of the text in its message: keep only where it broke.
    const at = /position (\d+)/.exec(errorMessage(err));
    throw new IdentityError(
      `proxy identity ${file} is not valid JSON${at ? ` (at position ${at[1]})` : ''}`,
    );
  }
  const result = identitySchema.validate(parsed, {
    abortEarly: true,
    // The messages name the field; no value is quoted (a pattern failure would quote it).
    errors: { wrap: { label: false } },
    messages: { 'string.pattern.base': '{{#label}} does not have the expected format' },
  });
  const { error } = result;
  if (error) {
    const detail = error.details[0];
    const field = detail && detail.path.length ? detail.path.join('.') : '(top level)';
    throw new IdentityError(
      `proxy identity ${file} is invalid: field ${field}: ${detail?.message ?? error.message}`,
    );
  }
  return result.value;
}
