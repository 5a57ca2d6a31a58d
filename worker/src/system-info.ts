import fs from 'node:fs';
import path from 'node:path';

/** The file the waker writes when it gives a persona a proxy identity. */
export const IDENTITY_FILE = 'proxy-identity.json';

/** Browser requests that failed at the proxy; null while the persona has no proxy identity. */
export class ProxyErrors {
  private count = 0;

  constructor(private readonly personaDir: string | null) {}

  record(errorText: string | undefined): void {
    if (errorText && /ERR_(PROXY|TUNNEL)/.test(errorText)) this.count += 1;
  }

  value(): number | null {
    if (!this.personaDir || !fs.existsSync(path.join(this.personaDir, IDENTITY_FILE))) return null;
    return this.count;
  }
}

/** Touches `.update-trigger` at the repository root for the supervisor to pick up. */
export function touchUpdateTrigger(repoRoot: string): string {
  const file = path.join(repoRoot, '.update-trigger');
  fs.writeFileSync(file, `${new Date().toISOString()}\n`);
  return file;
}
