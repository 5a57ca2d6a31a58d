import type { AccessNeed } from './access';
import { scopeOpens } from './access';
import { AUTH_INVALID, AUTH_UNCONFIGURED, AuthError, bearerToken, safeEqual } from './auth';
import type { TokenClaims } from './tokens';
import { looksLikeToken, TokenSigner } from './tokens';

/** Who made a call: the service key, or a scoped token (its claims, signature checked). */
export type Credential = { kind: 'key' } | { kind: 'token'; claims: TokenClaims };

/** Why a request was refused, as the refusal metrics count it. */
export const REFUSAL_REASONS = [
  'missing',
  'invalid',
  'expired',
  'revoked',
  'persona',
  'scope',
  'page',
  'throttled',
  'unconfigured',
] as const;
export type RefusalReason = (typeof REFUSAL_REASONS)[number];

/** A refused request: its status, its `{detail}` body, the reason counted, and when to retry. */
export class AuthRefusal extends AuthError {
  constructor(
    status: 401 | 403 | 429 | 500,
    detail: string,
    readonly reason: RefusalReason,
    readonly retryAfterS: number | null = null,
  ) {
    super(status, detail);
  }

  override get headers(): Record<string, string> {
    return this.retryAfterS === null ? {} : { 'retry-after': String(this.retryAfterS) };
  }
}

/** How a credential shows in logs and the request log: never the secret. */
export function credentialName(c: Credential | null): string {
  if (!c) return '';
  return c.kind === 'key' ? 'key' : c.claims.id;
}

export const DEFAULT_FAILURES_PER_MINUTE = 20;
/** Addresses remembered at most: the oldest are forgotten first (a scan from many addresses). */
const MAX_ADDRESSES = 10_000;
const WINDOW_MS = 60_000;

/**
 * Failed attempts per client address over the last minute. Past `limit`, that address's
 * requests without a right credential are answered 429 until the minute of its oldest failure
 * is over; requests with a right credential are never held back.
 */
export class FailureThrottle {
  private readonly failures = new Map<string, number[]>();

  constructor(
    private readonly limit: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Seconds until `address` may try again, or null when it is not throttled. */
  blockedFor(address: string): number | null {
    if (this.limit <= 0) return null;
    const times = this.recent(address);
    if (times.length < this.limit) return null;
    const oldest = times[times.length - this.limit] ?? this.now();
    return Math.max(1, Math.ceil((oldest + WINDOW_MS - this.now()) / 1000));
  }

  failed(address: string): void {
    if (this.limit <= 0) return;
    const times = this.recent(address);
    times.push(this.now());
    // Only the newest `limit` matter: an address that keeps trying holds no more than that.
    if (times.length > this.limit) times.splice(0, times.length - this.limit);
    this.failures.delete(address);
    this.failures.set(address, times);
    for (const oldest of this.failures.keys()) {
      if (this.failures.size <= MAX_ADDRESSES) break;
      this.failures.delete(oldest);
    }
  }

  /** Addresses with a failure in the last minute. */
  get size(): number {
    for (const address of [...this.failures.keys()]) this.recent(address);
    return this.failures.size;
  }

  private recent(address: string): number[] {
    const since = this.now() - WINDOW_MS;
    const times = (this.failures.get(address) ?? []).filter((t) => t > since);
    if (times.length === 0) this.failures.delete(address);
    else this.failures.set(address, times);
    return times;
  }
}

export interface AuthGuardOptions {
  serviceKey: string | null;
  /** Failed attempts an address may make in a minute before it meets 429 (0: never). */
  failuresPerMinute?: number;
  /** Whether a token id was revoked (the waker's store, or the list it pushed to a worker). */
  revoked?: (id: string) => boolean;
  /** A token made by a worker process names it (`inst`): only that process takes it. */
  instance?: string;
  /** Each refusal, by reason (the refusal metrics). */
  onRefusal?: (reason: RefusalReason) => void;
  now?: () => number;
}

/** What the guard reads of a request. */
export interface Presented {
  authorization: string | string[] | undefined;
  /** The client's address (the throttle's key). */
  address: string | undefined;
}

/**
 * The one check of a credential, for every door of the product: the service key opens
 * everything; a token opens what its scope names, of its own persona (and page) only, until it
 * expires or is revoked. Failed attempts are counted per address, and past the limit answered
 * 429 with `Retry-After`; the right credential is always served.
 */
export class AuthGuard {
  readonly signer: TokenSigner | null;
  private readonly throttle: FailureThrottle;
  private readonly now: () => number;

  constructor(private readonly o: AuthGuardOptions) {
    this.signer = o.serviceKey ? new TokenSigner(o.serviceKey) : null;
    this.now = o.now ?? Date.now;
    this.throttle = new FailureThrottle(
      o.failuresPerMinute ?? DEFAULT_FAILURES_PER_MINUTE,
      this.now,
    );
  }

  /** Addresses with a failed attempt in the last minute (the throttle's memory). */
  get trackedAddresses(): number {
    return this.throttle.size;
  }

  /**
   * The credential a request carries, checked against what its route needs and the persona it
   * is for (null: a worker without a persona). Null for a public route, which needs none;
   * throws AuthRefusal otherwise.
   */
  check(req: Presented, need: AccessNeed, persona: string | null): Credential | null {
    if (need.access === 'status' || need.access === 'static') return null;
    const presented = this.identify(req.authorization);
    if (presented.ok) return this.admit(presented.credential, need, persona, req.address);
    throw this.fail(presented.reason, req.address);
  }

  /**
   * A credential of `persona`, whatever it opens (the key, or any token of that persona): what
   * lets a page load wake a sleeping persona. Throws AuthRefusal otherwise, counted as `check`.
   */
  checkHolder(req: Presented, persona: string | null): Credential {
    const presented = this.identify(req.authorization);
    if (!presented.ok) throw this.fail(presented.reason, req.address);
    const c = presented.credential;
    if (c.kind === 'token' && c.claims.persona !== persona) throw this.fail('persona', req.address);
    return c;
  }

  /**
   * Who a bearer value says it is, signature, expiry, revocation and instance checked, but not
   * the route or persona: what the request log records beside a call.
   */
  identify(
    authorization: string | string[] | undefined,
  ): { ok: true; credential: Credential } | { ok: false; reason: RefusalReason } {
    const key = this.o.serviceKey;
    if (!key || !this.signer) return { ok: false, reason: 'unconfigured' };
    const bearer = bearerToken(authorization);
    if (bearer === null) return { ok: false, reason: 'missing' };
    if (!looksLikeToken(bearer)) {
      return safeEqual(bearer, key)
        ? { ok: true, credential: { kind: 'key' } }
        : { ok: false, reason: 'invalid' };
    }
    const checked = this.signer.verify(bearer, this.now());
    if (!checked.ok)
      return { ok: false, reason: checked.fault === 'expired' ? 'expired' : 'invalid' };
    const { claims } = checked;
    if (claims.inst !== undefined && claims.inst !== this.o.instance)
      return { ok: false, reason: 'expired' };
    if (this.o.revoked?.(claims.id)) return { ok: false, reason: 'revoked' };
    return { ok: true, credential: { kind: 'token', claims } };
  }

  /** A right credential for this request, or the refusal that says what it does not open. */
  private admit(
    c: Credential,
    need: AccessNeed,
    persona: string | null,
    address: string | undefined,
  ): Credential {
    if (c.kind === 'key') return c;
    const { claims } = c;
    if (claims.persona !== persona) throw this.fail('persona', address);
    if (!scopeOpens(claims.scope, need.access)) {
      this.o.onRefusal?.('scope');
      throw new AuthRefusal(403, `Token scope '${claims.scope}' does not open this route`, 'scope');
    }
    // A page-limited token opens only calls naming its page: nothing that adds or lists pages.
    if (claims.page_id !== null && need.access !== 'live' && need.pageId !== claims.page_id) {
      this.o.onRefusal?.('page');
      throw new AuthRefusal(403, `Token is limited to page ${claims.page_id}`, 'page');
    }
    return c;
  }

  private fail(reason: RefusalReason, address: string | undefined): AuthRefusal {
    if (reason === 'unconfigured') {
      this.o.onRefusal?.(reason);
      return new AuthRefusal(500, AUTH_UNCONFIGURED, reason);
    }
    const where = address ?? 'unknown';
    const wait = this.throttle.blockedFor(where);
    this.throttle.failed(where);
    if (wait !== null) {
      this.o.onRefusal?.('throttled');
      return new AuthRefusal(
        429,
        `Too many failed attempts from this address: try again in ${wait} s`,
        'throttled',
        wait,
      );
    }
    this.o.onRefusal?.(reason);
    return new AuthRefusal(401, refusalDetail(reason), reason);
  }
}

/** The `{detail}` of a 401: the API's own for a missing or wrong key, what happened for a token. */
function refusalDetail(reason: RefusalReason): string {
  switch (reason) {
    case 'expired':
      return `${AUTH_INVALID}: the token has expired`;
    case 'revoked':
      return `${AUTH_INVALID}: the token was revoked`;
    case 'persona':
      return `${AUTH_INVALID}: the token is for another persona`;
    default:
      return AUTH_INVALID;
  }
}
