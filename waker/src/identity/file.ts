import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { IDENTITY_FILE, identitySchema } from '@persona-browser/contracts';
import type { ProxyIdentity } from '@persona-browser/contracts';

/** Where a persona's identity file is. */
export const identityPath = (personaDir: string): string => path.join(personaDir, IDENTITY_FILE);

/**
 * Writes the identity into the persona folder at once or not at all: a temporary file beside
 * it (mode 0600: it holds the session's password), then a rename over the old one. A waker
 * running as root hands the file to the folder's owner, the user the worker runs as.
 */
export function writeIdentity(personaDir: string, identity: ProxyIdentity): string {
  const file = identityPath(personaDir);
  const tmp = path.join(personaDir, `.${IDENTITY_FILE}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    const fd = fs.openSync(tmp, 'wx', 0o600);
    try {
      fs.fchmodSync(fd, 0o600);
      if (process.getuid?.() === 0) {
        const owner = fs.statSync(personaDir);
        fs.fchownSync(fd, owner.uid, owner.gid);
      }
      fs.writeFileSync(fd, `${JSON.stringify(identity, null, 2)}\n`);
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    fs.renameSync(tmp, file);
  } catch (err) {
    fs.rmSync(tmp, { force: true });
    throw err;
  }
  return file;
}

/** Removes the persona's identity file, if any. */
export function removeIdentity(personaDir: string): void {
  fs.rmSync(identityPath(personaDir), { force: true });
}

/** The identity file of the folder, or null when it is missing or not valid. */
export function readIdentityFile(personaDir: string): ProxyIdentity | null {
  try {
    const parsed: unknown = JSON.parse(fs.readFileSync(identityPath(personaDir), 'utf8'));
    const result = identitySchema.validate(parsed);
    return result.error ? null : result.value;
  } catch {
    return null;
  }
}
