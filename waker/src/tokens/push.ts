import type { Address } from '../drivers/types';
import type { Logger } from '@persona-browser/service-kit';
import { errorMessage } from '@persona-browser/service-kit';
import { pushRevokedTokens } from '../worker-client';
import type { TokenStore } from './store';

const TRIES = 3;
const TIMEOUT_MS = 3_000;

/**
 * Tells a persona's worker which of its tokens are revoked, so that it refuses them itself (a
 * call that reaches it without the front door) and closes what they hold open (a viewer, a
 * DevTools client). Sent whole, on each revocation and whenever a worker comes up; the front
 * door checks the store itself, so a push that fails leaves no revoked token open through it.
 */
export class RevocationPush {
  constructor(
    private readonly store: TokenStore,
    private readonly serviceKey: string | null,
    private readonly logger: Logger,
  ) {}

  async send(persona: string, address: Address): Promise<void> {
    if (!this.serviceKey) return;
    const ids = this.store.revokedOf(persona);
    let last: unknown = null;
    for (let attempt = 1; attempt <= TRIES; attempt++) {
      try {
        await pushRevokedTokens(address, this.serviceKey, ids, TIMEOUT_MS);
        return;
      } catch (err) {
        last = err;
        await new Promise((r) => setTimeout(r, 200 * attempt));
      }
    }
    this.logger.warn('revoked tokens not pushed to the worker', {
      persona,
      error: errorMessage(last),
    });
  }
}
