import fs from 'node:fs';
import path from 'node:path';
import type { TokenClaims, TokenScope } from '@persona-browser/service-kit';
import {
  TOKEN_SCOPES,
  TokenSigner,
  errnoCode,
  errorMessage,
  isRecord,
  newTokenId,
  tokenHash,
} from '@persona-browser/service-kit';

/** The file in the personas folder that keeps the tokens across restarts (hashes, never tokens). */
export const TOKENS_FILE = '.tokens.json';
/** Tokens standing at once, at most: minting past it is refused until some expire or go. */
export const MAX_TOKENS = 10_000;
/** The longest a token may live: a year. */
export const MAX_TTL_S = 365 * 24 * 3600;

/** A token as the API lists it: what it opens and until when, never the token itself. */
export interface TokenInfo {
  id: string;
  persona: string;
  scope: TokenScope;
  page_id: string | null;
  label: string | null;
  created_at: string;
  expires_at: string;
}

/** What the file keeps of a token: the listing, its hash, and when it was revoked. */
interface TokenRecord extends TokenInfo {
  /** SHA-256 of the token: proof of which token this record is, from which it cannot be made. */
  hash: string;
  revoked_at: string | null;
}

export interface MintRequest {
  persona: string;
  scope: TokenScope;
  ttl_s: number;
  page_id?: string | null;
  label?: string | null;
}

const nullableText = (v: unknown): v is string | null => v === null || typeof v === 'string';

/** A record as the file keeps it; anything else in the file is skipped. */
function isTokenRecord(r: Record<string, unknown>): r is Record<string, unknown> & TokenRecord {
  return (
    typeof r.id === 'string' &&
    typeof r.persona === 'string' &&
    TOKEN_SCOPES.some((s) => s === r.scope) &&
    nullableText(r.page_id) &&
    nullableText(r.label) &&
    typeof r.created_at === 'string' &&
    typeof r.expires_at === 'string' &&
    typeof r.hash === 'string' &&
    nullableText(r.revoked_at)
  );
}

/** A mint the store refuses (too many tokens standing): the API's 409. */
export class TokenLimit extends Error {}

/**
 * The tokens this waker made, one owner: minted here, listed without their secret, revoked at
 * once. Kept in `PERSONAS_DIR/.tokens.json` (written whole through a temporary file, readable by
 * its owner only), so tokens and revocations survive a restart of the waker. A revoked token
 * stays in the file until its expiry, when no signature check would take it anyway; an
 * expired one leaves it.
 */
export class TokenStore {
  private records = new Map<string, TokenRecord>();
  private readonly signer: TokenSigner | null;
  private readonly file: string;
  private readonly listeners = new Set<(persona: string) => void>();

  constructor(
    dir: string,
    serviceKey: string | null,
    private readonly now: () => number = Date.now,
  ) {
    this.file = path.join(dir, TOKENS_FILE);
    this.signer = serviceKey ? new TokenSigner(serviceKey) : null;
    this.load();
  }

  /** Makes a token; the only time the token itself is seen. */
  mint(req: MintRequest): { info: TokenInfo; token: string } {
    if (!this.signer) throw new Error('SERVICE_KEY is not set: no token can be made');
    this.sweep();
    if (this.records.size >= MAX_TOKENS)
      throw new TokenLimit(`${MAX_TOKENS} tokens stand already: revoke some first`);
    const nowMs = this.now();
    const claims: TokenClaims = {
      id: newTokenId(),
      persona: req.persona,
      scope: req.scope,
      page_id: req.page_id ?? null,
      label: req.label ?? null,
      exp: Math.floor(nowMs / 1000) + req.ttl_s,
    };
    const token = this.signer.sign(claims);
    const info: TokenInfo = {
      id: claims.id,
      persona: claims.persona ?? req.persona,
      scope: claims.scope,
      page_id: claims.page_id,
      label: claims.label,
      created_at: new Date(nowMs).toISOString(),
      expires_at: new Date(claims.exp * 1000).toISOString(),
    };
    this.records.set(info.id, { ...info, hash: tokenHash(token), revoked_at: null });
    this.save();
    return { info, token };
  }

  /** The tokens that open something now (neither expired nor revoked), newest first. */
  list(): TokenInfo[] {
    this.sweep();
    return [...this.records.values()]
      .filter((r) => r.revoked_at === null)
      .map(({ hash: _hash, revoked_at: _revoked, ...info }) => info)
      .reverse();
  }

  /** Revokes a token; false when none by that id stands. Listeners hear of it at once. */
  revoke(id: string): boolean {
    this.sweep();
    const r = this.records.get(id);
    if (!r || r.revoked_at !== null) return false;
    r.revoked_at = new Date(this.now()).toISOString();
    this.save();
    for (const l of [...this.listeners]) l(r.persona);
    return true;
  }

  isRevoked(id: string): boolean {
    const r = this.records.get(id);
    return r !== undefined && r.revoked_at !== null;
  }

  /** The ids of one persona's revoked tokens still before their expiry (what its worker refuses). */
  revokedOf(persona: string): string[] {
    this.sweep();
    return [...this.records.values()]
      .filter((r) => r.persona === persona && r.revoked_at !== null)
      .map((r) => r.id);
  }

  /** Calls `listener` with the persona of each token revoked; returns the unsubscribe. */
  onRevoke(listener: (persona: string) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Forgets what has expired. */
  private sweep(): void {
    const nowMs = this.now();
    let changed = false;
    for (const [id, r] of this.records) {
      if (Date.parse(r.expires_at) <= nowMs) {
        this.records.delete(id);
        changed = true;
      }
    }
    if (changed) this.save();
  }

  private load(): void {
    let text: string;
    try {
      text = fs.readFileSync(this.file, 'utf8');
    } catch (err) {
      if (errnoCode(err) === 'ENOENT') return;
      throw new Error(`cannot read ${this.file}: ${errorMessage(err)}`);
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (err) {
      throw new Error(`${this.file} is not JSON (${errorMessage(err)}): fix or remove it`);
    }
    const list = isRecord(parsed) ? parsed.tokens : null;
    if (!Array.isArray(list))
      throw new Error(`${this.file} has no "tokens" list: fix or remove it`);
    for (const r of list) if (isRecord(r) && isTokenRecord(r)) this.records.set(r.id, r);
    this.sweep();
  }

  private save(): void {
    const tmp = `${this.file}.${process.pid}.tmp`;
    const text = `${JSON.stringify({ tokens: [...this.records.values()] }, null, 1)}\n`;
    fs.writeFileSync(tmp, text, { mode: 0o600 });
    fs.renameSync(tmp, this.file);
  }
}
