import type { IncomingMessage } from 'node:http';
import path from 'node:path';
import type { Duplex } from 'node:stream';
import express from 'express';
import type { Request, Response, Router } from 'express';
import type { Navigator } from '../browser/navigator';
import { ApiError, BadRequest, NotInitialized } from '../errors';
import { AuthError } from '@persona-browser/service-kit';
import type { Credential } from '@persona-browser/service-kit';
import type { Authenticator } from '../http/auth';
import { refuseUpgrade } from '../http/refuse-upgrade';
import type { Logger } from '@persona-browser/service-kit';
import { PANEL_DIR } from '../paths';
import { VncBridge, WEBSOCKET_PATH } from './bridge';
import type { VncDemand } from './bridge';
import { PersonAsks } from './asks';
import { LiveControl } from './control';
import type { LiveSession, SessionGrant } from './sessions';
import { SessionStore, clearedCookie, sessionCookie } from './sessions';

export { WEBSOCKET_PATH } from './bridge';

/** Where the viewer's VNC server is, or why there is none. */
export type VncTarget = { port: number; demand?: VncDemand } | { unavailable: string };

export interface LiveOptions {
  vnc: VncTarget;
  navigator: Navigator;
  /** The worker's door: the live view needs the key or a `live` or `full` token. */
  auth: Authenticator;
  logger: Logger;
  /** Control survives the controlling viewer's last WebSocket by this long (default 10 s). */
  graceMs?: number;
  /** Lease ttl while a person is in control (default 60 s, renewed while connected). */
  leaseTtlS?: number;
  renewMs?: number;
  /** Called each time a person takes control of a page (the take-over counter). */
  onTakeover?: () => void;
}

export const DEFAULT_GRACE_MS = 10_000;
// The package exports only core/rfb.js (its ESM entry); core/ and vendor/ sit beside it.
const NOVNC_DIR = path.resolve(path.dirname(require.resolve('@novnc/novnc')), '..');
const VIEWER_DIR = path.join(PANEL_DIR, 'vnc');

/** What the live view's pages may load: this worker only; frames only inside its own panel. */
const CSP = [
  "default-src 'self'",
  "img-src 'self' data: blob:",
  "style-src 'self' 'unsafe-inline'",
  "script-src 'self'",
  "worker-src 'self' blob:",
  "connect-src 'self'",
  "frame-ancestors 'self'",
].join('; ');

class Unavailable extends ApiError {
  constructor(reason: string) {
    super(503, `Live view unavailable: ${reason}`, null);
  }
}

/**
 * The live view: noVNC served from its package, viewer sessions (cookie for a key or token
 * shown once), the WebSocket bridge to x11vnc, and control of a page for a person.
 *
 *   GET    /vnc/                 the viewer page (503 without a VNC server)
 *   POST   /vnc/session          bearer → HttpOnly session cookie (path /vnc)
 *   GET    /vnc/session          is the cookie's session valid (401 if not), its page limit
 *   DELETE /vnc/session          ends it (its WebSockets close, its control ends)
 *   GET    /vnc/control          which page is controlled, by whom
 *   POST   /vnc/control          {page_id}: lease it for this viewer, input allowed
 *   DELETE /vnc/control          hand it back
 *   WS     /vnc/websockify       RFB over WebSocket (cookie required)
 *
 * A session opened with a token keeps the token's limits: only its page may be taken over
 * (another is 403 `{detail}`), and it ends at the token's expiry at the latest, and at once
 * when the token is revoked (an `ask-person` link once the page is handed back). Its control
 * stays on that page: no press on the browser's bars or tab shortcut reaches the display, and
 * another tab that comes forward sends the page back in front (live/confine.ts).
 */
export class LiveView {
  readonly sessions = new SessionStore((id) => this.endSession(id, 'evicted'));
  readonly control: LiveControl;
  /** The standing `ask-person` calls, each with its one-page link. */
  readonly asks: PersonAsks;
  private readonly bridge: VncBridge | null;
  private readonly auth: Authenticator;
  /** Ends each session at its expiry (a token's, or the 12 h of the key's). */
  private readonly expiry = new Map<string, NodeJS.Timeout>();
  private readonly stopListening: () => void;

  constructor(private readonly o: LiveOptions) {
    this.auth = o.auth;
    const port = 'port' in o.vnc ? o.vnc.port : null;
    this.bridge =
      port === null
        ? null
        : new VncBridge({
            port,
            demand: 'demand' in o.vnc ? o.vnc.demand : undefined,
            logger: o.logger,
            canInput: (id) => this.control.canInput(id),
            confinedTop: (id) => this.control.confinedTop(id),
            onSockets: (id) => this.control.socketsChanged(id),
          });
    this.control = new LiveControl({
      navigator: o.navigator,
      logger: o.logger,
      graceMs: o.graceMs ?? DEFAULT_GRACE_MS,
      leaseTtlS: o.leaseTtlS ?? 60,
      renewMs: o.renewMs ?? 10_000,
      socketsOf: (id) => this.bridge?.socketsOf(id) ?? 0,
      onTakeover: o.onTakeover,
    });
    this.asks = new PersonAsks(this.control, this.auth);
    this.stopListening = this.auth.revocations.onRevoke((ids) => {
      for (const id of this.sessions.openedWith(ids)) this.endSession(id, 'token revoked');
    });
  }

  get unavailable(): string | null {
    return 'unavailable' in this.o.vnc ? this.o.vnc.unavailable : null;
  }

  close(): void {
    this.stopListening();
    this.asks.close();
    for (const timer of this.expiry.values()) clearTimeout(timer);
    this.expiry.clear();
    this.control.close();
    this.bridge?.close();
  }

  /** A new viewer session for this credential, ended by a timer at its expiry. */
  private openSession(credential: Credential | null): LiveSession {
    const grant: SessionGrant | null =
      credential?.kind === 'token'
        ? {
            tokenId: credential.claims.id,
            pageId: credential.claims.page_id,
            exp: credential.claims.exp,
          }
        : null;
    const s = this.sessions.create(grant);
    const timer = setTimeout(() => this.endSession(s.id, 'expired'), s.expiresAt - Date.now());
    timer.unref();
    this.expiry.set(s.id, timer);
    return s;
  }

  /** Ends a viewer session: its WebSockets close and its control ends. */
  private endSession(id: string, reason: string): void {
    const timer = this.expiry.get(id);
    if (timer) clearTimeout(timer);
    this.expiry.delete(id);
    this.sessions.delete(id);
    this.control.sessionEnded(id);
    this.bridge?.closeSession(id);
    this.o.logger.info('live view session ended', { reason });
  }

  /** The `upgrade` listener of the worker's HTTP server. */
  readonly upgrade = (req: IncomingMessage, socket: Duplex, head: Buffer): void => {
    socket.on('error', () => undefined);
    const pathname = (req.url ?? '').split('?')[0];
    if (pathname !== WEBSOCKET_PATH) {
      return refuseUpgrade(socket, 404, {
        success: false,
        error: `No WebSocket at ${pathname}`,
        page_id: null,
      });
    }
    const why = this.unavailable;
    if (why !== null || !this.bridge) {
      const error = new Unavailable(why ?? 'no VNC server').message;
      return refuseUpgrade(socket, 503, { success: false, error, page_id: null });
    }
    const session = this.sessions.fromRequest(req);
    if (!session) return refuseUpgrade(socket, 401, { detail: 'Invalid API key' });
    this.bridge.accept(req, socket, head, session.id);
  };

  router(): Router {
    const r = express.Router({ caseSensitive: true, strict: false });
    r.use('/vnc', (_req, res, next) => {
      res.setHeader('Content-Security-Policy', CSP);
      res.setHeader('Referrer-Policy', 'no-referrer');
      res.setHeader('X-Content-Type-Options', 'nosniff');
      next();
    });

    r.get('/vnc', (req, res) => {
      // Module URLs in the page are absolute, but /vnc/ is the one address of the viewer.
      if (!req.originalUrl.startsWith('/vnc/')) return res.redirect(301, '/vnc/');
      const why = this.unavailable;
      if (why !== null) throw new Unavailable(why);
      res.setHeader('Cache-Control', 'no-store');
      res.sendFile(path.join(VIEWER_DIR, 'index.html'));
    });
    r.use('/vnc/novnc/core', express.static(path.join(NOVNC_DIR, 'core'), { index: false }));
    r.use('/vnc/novnc/vendor', express.static(path.join(NOVNC_DIR, 'vendor'), { index: false }));

    r.post('/vnc/session', (req, res) => {
      const s = this.openSession(this.auth.check(req));
      res.setHeader('Set-Cookie', sessionCookie(req, s, isSecure(req)));
      res.setHeader('Cache-Control', 'no-store');
      res.json(this.sessionBody(s));
    });
    r.get('/vnc/session', (req, res) => {
      const s = this.sessions.fromRequest(req);
      if (!s) throw new AuthError(401, 'Invalid API key');
      res.setHeader('Cache-Control', 'no-store');
      res.json(this.sessionBody(s));
    });
    r.delete('/vnc/session', (req, res) => {
      const s = this.sessions.fromRequest(req);
      if (s) this.endSession(s.id, 'logged out');
      res.setHeader('Set-Cookie', clearedCookie(req));
      res.json({ success: true, page_id: null, message: s ? 'Session ended' : 'No session' });
    });

    r.get('/vnc/control', (req, res) => {
      const { session: s } = this.authorize(req);
      res.setHeader('Cache-Control', 'no-store');
      res.json(this.controlBody(s?.id ?? null));
    });
    r.post('/vnc/control', async (req, res) => {
      const who = this.authorize(req);
      let s = who.session;
      const body: unknown = req.body;
      const pageId =
        body && typeof body === 'object' && !Array.isArray(body) && 'page_id' in body
          ? body.page_id
          : undefined;
      if (typeof pageId !== 'string' || !pageId)
        throw new BadRequest("'page_id' is required (the page to take control of)");
      res.locals.pageId = pageId;
      const limit = who.limit;
      if (limit !== null && pageId !== limit) throw limitedTo(limit);
      const why = this.unavailable;
      if (why !== null) throw new Unavailable(why);
      if (!this.o.navigator.initialized) throw new NotInitialized();
      // A bearer caller without a viewer session gets one: the viewer it opens next drives.
      if (!s) {
        s = this.openSession(who.credential);
        res.setHeader('Set-Cookie', sessionCookie(req, s, isSecure(req)));
      }
      // A page-limited session is kept on its page: the display shows the whole window.
      await this.control.take(s.id, pageId, limit !== null);
      res.json({ ...this.controlBody(s.id), message: `Page ${pageId} is yours to drive` });
    });
    r.delete('/vnc/control', (req, res) => {
      const { limit } = this.authorize(req);
      // A session limited to a page hands back that page only, not another viewer's.
      const held = this.control.current();
      if (limit !== null && held !== null && held.pageId !== limit) throw limitedTo(limit);
      const pageId = this.control.release('handed back');
      res.json({
        success: true,
        page_id: pageId,
        message: pageId ? `Page ${pageId} handed back` : 'No page was controlled',
      });
    });

    // The viewer's own script and style (worker/panel/vnc).
    r.use('/vnc', express.static(VIEWER_DIR, { index: false }));
    r.use('/vnc', (req: Request, res: Response) => {
      const p = req.originalUrl.split('?')[0] ?? req.originalUrl;
      res.status(404).json({ success: false, error: `No route ${req.method} ${p}`, page_id: null });
    });
    return r;
  }

  /**
   * The cookie's viewer session, else the bearer credential (null session); 401 otherwise.
   * `limit`: the one page the session or token may take control of, else null.
   */
  private authorize(req: Request): Caller {
    const session = this.sessions.fromRequest(req);
    if (session) return { session, credential: null, limit: session.grant?.pageId ?? null };
    const credential = this.auth.check(req);
    const limit = credential?.kind === 'token' ? credential.claims.page_id : null;
    return { session: null, credential, limit };
  }

  private sessionBody(s: LiveSession): Record<string, unknown> {
    const limit = s.grant?.pageId ?? null;
    return {
      success: true,
      page_id: null,
      expires_in: Math.round((s.expiresAt - Date.now()) / 1000),
      live_view: this.unavailable === null,
      reason: this.unavailable,
      page_limit: limit,
      asked: limit === null ? null : this.askedOn(limit),
    };
  }

  /** What the page waits for the person to do (an ask, a plugin's code), else null. */
  private askedOn(pageId: string): string | null {
    if (!this.o.navigator.initialized) return null;
    const pool = this.o.navigator.requirePool();
    return pool.has(pageId) ? pool.get(pageId).awaitingPerson : null;
  }

  private controlBody(sessionId: string | null): Record<string, unknown> {
    return {
      success: true,
      ...this.control.view(sessionId),
      viewers: this.bridge?.count ?? 0,
      live_view: this.unavailable === null,
    };
  }
}

/** Who asks, as the live view's control routes see it. */
interface Caller {
  session: LiveSession | null;
  /** The bearer credential, when no session cookie stood in for it. */
  credential: Credential | null;
  limit: string | null;
}

/** A session or token limited to one page asked for another: refused like a token's scope. */
const limitedTo = (pageId: string): AuthError =>
  new AuthError(403, `This live-view session is limited to page ${pageId}`);

function isSecure(req: Request): boolean {
  return req.secure || req.header('x-forwarded-proto') === 'https';
}
