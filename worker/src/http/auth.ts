import type { IncomingMessage } from 'node:http';
import { checkServiceKey } from '@persona-browser/service-kit';

/** The service key of this worker, checked as every service of the product checks it. */
export class Authenticator {
  constructor(private readonly serviceKey: string | null) {}

  /** Throws AuthError (401, or 500 without a key) unless the request carries the key. */
  check(req: IncomingMessage): void {
    checkServiceKey(req.headers.authorization, this.serviceKey);
  }
}
