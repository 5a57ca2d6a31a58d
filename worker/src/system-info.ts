import fs from 'node:fs';
import path from 'node:path';
import { updateTriggerPath } from '@persona-browser/service-kit';
import { IDENTITY_FILE } from '@persona-browser/contracts';

/**
 * Ping's `proxy_errors`: browser requests that failed at the proxy, null while the persona has
 * no proxy identity file. The count itself is the relay's (worker/src/identity/relay.ts), the
 * one place every proxied request passes; nothing else counts, so none is counted twice.
 */
export class ProxyErrors {
  constructor(
    private readonly personaDir: string | null,
    private readonly failures: () => number = () => 0,
  ) {}

  value(): number | null {
    if (!this.personaDir || !fs.existsSync(path.join(this.personaDir, IDENTITY_FILE))) return null;
    return this.failures();
  }
}

/** Touches `.update-trigger` at the repository root for the supervisor to pick up. */
export function touchUpdateTrigger(repoRoot: string): string {
  const file = updateTriggerPath(repoRoot);
  fs.writeFileSync(file, `${new Date().toISOString()}\n`);
  return file;
}
