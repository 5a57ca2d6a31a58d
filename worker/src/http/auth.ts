import crypto from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type {
  AccessNeed,
  Credential,
  RefusalReason,
  TokenClaims,
} from '@persona-browser/service-kit';
import { AuthGuard, accessOf, newTokenId } from '@persona-browser/service-kit';
import { Revocations } from './revocations';

export interface AuthenticatorOptions {
  serviceKey: string | null;
  /** The persona this worker runs (ping's `persona`): a token must name it. */
  persona: string | null;
  /** Failed attempts an address may make in a minute before 429 (AUTH_FAILURES_PER_MINUTE). */
  failuresPerMinute?: number;
  revocations?: Revocations;
  /** Each refusal, by reason (the refusal metric). */
  onRefusal?: (reason: RefusalReason) => void;
}

/** What a token this worker makes says, beyond what the worker fills in itself. */
export type OwnTokenClaims = Pick<TokenClaims, 'scope' | 'page_id' | 'label' | 'exp'>;

/**
 * This worker's door: the service key or a scoped token the waker made (or this worker made,
 * for a person's live-view link), checked as the route's access needs (service-kit's
 * `accessOf`), with failed attempts throttled per address. Every entry of the worker (the
 * route tables, the live view, DevTools, MCP) checks through one instance.
 */
export class Authenticator {
  readonly revocations: Revocations;
  /** Names this process in the tokens it makes: a restarted worker refuses them. */
  readonly instance = crypto.randomBytes(8).toString('hex');
  private readonly guard: AuthGuard;

  constructor(private readonly o: AuthenticatorOptions) {
    this.revocations = o.revocations ?? new Revocations();
    this.guard = new AuthGuard({
      serviceKey: o.serviceKey,
      failuresPerMinute: o.failuresPerMinute,
      revoked: (id) => this.revocations.has(id),
      instance: this.instance,
      onRefusal: o.onRefusal,
    });
  }

  /**
   * The request's credential, checked against what its path needs (or `need`): null for a
   * public route; throws AuthRefusal (401, 403, 429, or 500 without a key) when it does not open it.
   */
  check(req: IncomingMessage, need?: AccessNeed): Credential | null {
    // Express keeps the whole path in originalUrl where a router strips its prefix from url.
    const url =
      'originalUrl' in req && typeof req.originalUrl === 'string'
        ? req.originalUrl
        : (req.url ?? '/');
    return this.guard.check(
      { authorization: req.headers.authorization, address: req.socket.remoteAddress },
      need ?? accessOf(req.method ?? 'GET', url),
      this.o.persona,
    );
  }

  /** Who a request says it is, when that holds (the request log's column); else null. */
  identify(req: IncomingMessage): Credential | null {
    const who = this.guard.identify(req.headers.authorization);
    return who.ok ? who.credential : null;
  }

  /**
   * A token of this persona that only this process takes, for `claims`: the link a person
   * opens. Revoke it through `revocations.revoke(id, exp)` when its purpose ends.
   */
  mint(claims: OwnTokenClaims): { token: string; claims: TokenClaims } | null {
    const signer = this.guard.signer;
    if (!signer) return null;
    const full: TokenClaims = {
      id: newTokenId(),
      persona: this.o.persona,
      ...claims,
      inst: this.instance,
    };
    return { token: signer.sign(full), claims: full };
  }
}
