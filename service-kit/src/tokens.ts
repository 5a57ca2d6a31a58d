import crypto from 'node:crypto';
import type { TokenScope } from './access';
import { TOKEN_SCOPES } from './access';
import { isRecord } from './guards';

/**
 * Scoped tokens: what the waker hands out instead of the service key (a person at the live view,
 * a read-only dashboard, one persona's automation).
 *
 *   pbt_<claims>.<signature>     claims: base64url JSON; signature: HMAC-SHA256 of `pbt_<claims>`
 *
 * Signed, so that a worker checks one with no round trip to the waker: the signing key is derived
 * from the service key every worker already holds, so nothing new is handed out or kept in sync,
 * and changing the service key ends every token. What a signature cannot say, that a token was
 * revoked before its expiry, the waker tells each worker (a list of revoked ids it pushes), and
 * its front door checks its own list first. The waker keeps only a hash of each token it made.
 */
export const TOKEN_PREFIX = 'pbt_';

/** What a token says of itself; signed, so a worker trusts every field. */
export interface TokenClaims {
  /** `tok_` and 16 hex digits: what the API lists, revokes and the request log names. */
  id: string;
  /** The persona it opens (its folder name), or null for a worker run without a persona. */
  persona: string | null;
  scope: TokenScope;
  /** Only this page (control of it in the live view; calls naming it), else any. */
  page_id: string | null;
  /** A note for people (who has it, what for); shown in lists and the request log. */
  label: string | null;
  /** Expiry, epoch seconds. */
  exp: number;
  /**
   * The worker process that made it (a token `ask-person` hands out): any other process, the
   * same persona restarted included, refuses it. Absent on the waker's tokens.
   */
  inst?: string;
}

/** Why a presented token was not taken. */
export type TokenFault = 'malformed' | 'signature' | 'expired';

export type TokenCheck = { ok: true; claims: TokenClaims } | { ok: false; fault: TokenFault };

const b64 = (buf: Buffer): string => buf.toString('base64url');

export const newTokenId = (): string => `tok_${crypto.randomBytes(8).toString('hex')}`;

/** The form stored in place of a token: its SHA-256, hex. */
export const tokenHash = (token: string): string =>
  crypto.createHash('sha256').update(token).digest('hex');

function isClaims(c: unknown): c is TokenClaims {
  if (!isRecord(c)) return false;
  const nullableString = (x: unknown): boolean => x === null || typeof x === 'string';
  return (
    typeof c.id === 'string' &&
    nullableString(c.persona) &&
    typeof c.scope === 'string' &&
    TOKEN_SCOPES.some((s) => s === c.scope) &&
    nullableString(c.page_id) &&
    nullableString(c.label) &&
    typeof c.exp === 'number' &&
    Number.isFinite(c.exp) &&
    (c.inst === undefined || typeof c.inst === 'string')
  );
}

/** Makes and checks tokens with the key derived from one service key. */
export class TokenSigner {
  private readonly key: Buffer;

  constructor(serviceKey: string) {
    this.key = Buffer.from(
      crypto.hkdfSync('sha256', serviceKey, 'persona-browser', 'scoped tokens v1', 32),
    );
  }

  sign(claims: TokenClaims): string {
    const body = `${TOKEN_PREFIX}${b64(Buffer.from(JSON.stringify(claims)))}`;
    return `${body}.${b64(this.mac(body))}`;
  }

  /** A token's claims when its signature holds and it has not expired (`now` in ms). */
  verify(token: string, now = Date.now()): TokenCheck {
    if (!token.startsWith(TOKEN_PREFIX) || token.length > 4096) return bad('malformed');
    const dot = token.lastIndexOf('.');
    if (dot < 0) return bad('malformed');
    const body = token.slice(0, dot);
    const given = Buffer.from(token.slice(dot + 1), 'base64url');
    const want = this.mac(body);
    if (given.length !== want.length || !crypto.timingSafeEqual(given, want))
      return bad('signature');
    let claims: unknown;
    try {
      claims = JSON.parse(Buffer.from(body.slice(TOKEN_PREFIX.length), 'base64url').toString());
    } catch {
      return bad('malformed');
    }
    if (!isClaims(claims)) return bad('malformed');
    if (claims.exp * 1000 <= now) return bad('expired');
    return { ok: true, claims };
  }

  private mac(body: string): Buffer {
    return crypto.createHmac('sha256', this.key).update(body).digest();
  }
}

const bad = (fault: TokenFault): TokenCheck => ({ ok: false, fault });

/** Whether a bearer value is meant as a token (rather than a service key). */
export const looksLikeToken = (value: string): boolean => value.startsWith(TOKEN_PREFIX);
