import type { IncomingMessage } from 'node:http';
import { safeEqual } from '@persona-browser/service-kit';
import { randomHex } from '../util';

/** Cookies of the live view start with this; the rest of the name is the port the client used. */
export const COOKIE_PREFIX = 'pb_vnc';
export const SESSION_TTL_S = 12 * 3600;
/** Oldest sessions are forgotten past this many (a client looping on POST /vnc/session). */
const MAX_SESSIONS = 500;

/** The scoped token a session was opened with: what it may do, and until when. */
export interface SessionGrant {
  /** The token's id: its revocation ends the session. */
  tokenId: string;
  /** The one page the session may take control of, else null (any). */
  pageId: string | null;
  /** The token's expiry, epoch seconds: the session ends then at the latest. */
  exp: number;
}

export interface LiveSession {
  id: string;
  expiresAt: number;
  /** The token that opened it, or null for the service key. */
  grant: SessionGrant | null;
}

/**
 * Viewer sessions: a random id in an HttpOnly cookie stands for "this browser showed the
 * service key, or a `live` or `full` token". Held in memory only, so they die with the worker.
 */
export class SessionStore {
  private readonly sessions = new Map<string, LiveSession>();

  constructor(
    /** A session forgotten to make room for a new one: whatever it holds must end too. */
    private readonly onEvicted: (id: string) => void = () => undefined,
    private readonly ttlS = SESSION_TTL_S,
    private readonly now: () => number = Date.now,
  ) {}

  /** A new session; one opened with a token ends at the token's expiry at the latest. */
  create(grant: SessionGrant | null = null): LiveSession {
    this.sweep();
    // Oldest first: a Map keeps insertion order, and deleting while iterating is safe.
    for (const oldest of this.sessions.keys()) {
      if (this.sessions.size < MAX_SESSIONS) break;
      this.sessions.delete(oldest);
      this.onEvicted(oldest);
    }
    const ttlEnd = this.now() + this.ttlS * 1000;
    const expiresAt = grant ? Math.min(ttlEnd, grant.exp * 1000) : ttlEnd;
    const session: LiveSession = { id: randomHex(32), expiresAt, grant };
    this.sessions.set(session.id, session);
    return session;
  }

  /** The live session a request's cookies name, or null. */
  fromRequest(req: IncomingMessage): LiveSession | null {
    for (const value of cookieValues(req.headers.cookie, COOKIE_PREFIX)) {
      const s = this.get(value);
      if (s) return s;
    }
    return null;
  }

  get(id: string): LiveSession | null {
    if (!/^[0-9a-f]{64}$/.test(id)) return null;
    for (const s of this.sessions.values()) {
      if (!safeEqual(s.id, id)) continue;
      if (s.expiresAt <= this.now()) {
        this.sessions.delete(s.id);
        return null;
      }
      return s;
    }
    return null;
  }

  delete(id: string): void {
    this.sessions.delete(id);
  }

  /** The ids of the sessions opened with one of these tokens. */
  openedWith(tokenIds: ReadonlySet<string>): string[] {
    const out: string[] = [];
    for (const s of this.sessions.values())
      if (s.grant && tokenIds.has(s.grant.tokenId)) out.push(s.id);
    return out;
  }

  get size(): number {
    this.sweep();
    return this.sessions.size;
  }

  private sweep(): void {
    const now = this.now();
    for (const [id, s] of this.sessions) if (s.expiresAt <= now) this.sessions.delete(id);
  }
}

/** Values of every cookie whose name starts with `prefix`. */
export function cookieValues(header: string | undefined, prefix: string): string[] {
  if (!header) return [];
  const out: string[] = [];
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    const name = part.slice(0, eq).trim();
    if (name === prefix || name.startsWith(`${prefix}_`)) out.push(part.slice(eq + 1).trim());
  }
  return out;
}

/**
 * The cookie's name: one per port the browser reached this worker on, so the live views of
 * several personas on one host (cookies ignore ports) never overwrite each other's session.
 */
export function cookieName(req: IncomingMessage): string {
  const host = req.headers.host ?? '';
  const m = /:(\d{1,5})$/.exec(host);
  return `${COOKIE_PREFIX}_${m ? m[1] : '80'}`;
}

export function sessionCookie(req: IncomingMessage, session: LiveSession, secure: boolean): string {
  // Rounded up: the browser must not drop the cookie before the session ends (the server ends
  // it on time; a cookie gone early would end a token's viewer up to half a second before).
  const maxAge = Math.max(0, Math.ceil((session.expiresAt - Date.now()) / 1000));
  return [
    `${cookieName(req)}=${session.id}`,
    'Path=/vnc',
    `Max-Age=${maxAge}`,
    'HttpOnly',
    'SameSite=Strict',
    ...(secure ? ['Secure'] : []),
  ].join('; ');
}

export function clearedCookie(req: IncomingMessage): string {
  return `${cookieName(req)}=; Path=/vnc; Max-Age=0; HttpOnly; SameSite=Strict`;
}
