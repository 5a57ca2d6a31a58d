import crypto from 'node:crypto';

/** The bodies of the API's authentication failures (`{detail}`, not the error envelope). */
export const AUTH_INVALID = 'Invalid API key';
export const AUTH_UNCONFIGURED = 'Server not properly configured';

/** An authentication failure: its status and the `{detail}` body it answers with. */
export class AuthError extends Error {
  constructor(
    readonly status: 401 | 403 | 429 | 500,
    readonly detail: string,
  ) {
    super(detail);
  }

  get body(): { detail: string } {
    return { detail: this.detail };
  }

  /** Headers the answer carries besides the body (`Retry-After` of a throttled address). */
  get headers(): Record<string, string> {
    return {};
  }
}

/**
 * Constant-time string equality: both sides are hashed first, so neither the position of the
 * first difference nor the lengths show in the time taken.
 */
export function safeEqual(a: string, b: string): boolean {
  const ha = crypto.createHash('sha256').update(a).digest();
  const hb = crypto.createHash('sha256').update(b).digest();
  return crypto.timingSafeEqual(ha, hb);
}

/** The token of an `Authorization: Bearer <token>` header, or null for any other header. */
export function bearerToken(header: string | string[] | undefined): string | null {
  if (typeof header !== 'string') return null;
  const m = /^Bearer\s+(.+)$/i.exec(header.trim());
  return m?.[1] ?? null;
}

/**
 * The one check of the service key, for the worker, the waker and the supervisor alike: throws
 * AuthError (500 without a configured key, 401 for a missing or wrong one), else returns.
 */
export function checkServiceKey(
  authorization: string | string[] | undefined,
  serviceKey: string | null,
): void {
  if (!serviceKey) throw new AuthError(500, AUTH_UNCONFIGURED);
  const token = bearerToken(authorization);
  if (token === null || !safeEqual(token, serviceKey)) throw new AuthError(401, AUTH_INVALID);
}
