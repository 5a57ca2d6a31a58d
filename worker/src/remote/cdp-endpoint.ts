import crypto from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import express from 'express';
import type { Router } from 'express';
import { WebSocketServer } from 'ws';
import type { WebSocket } from 'ws';
import type { Credential, Logger } from '@persona-browser/service-kit';
import {
  AUTH_INVALID,
  AuthError,
  AuthRefusal,
  accessOf,
  credentialName,
  errorMessage,
  safeEqual,
} from '@persona-browser/service-kit';
import type { Authenticator } from '../http/auth';
import type { GuestLink } from '../devtools/guest-link';
import type { GuestPolicy } from '../devtools/guest-policy';
import type { Navigator } from '../browser/navigator';
import { ApiError, Locked } from '../errors';
import { refuseUpgrade } from '../http/refuse-upgrade';
import { DevtoolsClient, POLICY_VIOLATION } from './devtools-client';

/** Where DevTools clients connect, as Chromium names its own browser endpoint. */
export const CDP_PATH = '/devtools/browser';

export interface CdpEndpointOptions {
  navigator: Navigator;
  /** The worker's door: DevTools needs the key or a `full` token of this persona. */
  auth: Authenticator;
  logger: Logger;
  /** Keep each client's `Runtime.enable` from its pages (DEVTOOLS_QUIET_RUNTIME). */
  quietRuntime: boolean;
  /** Unsent bytes past which a client is dropped (DEVTOOLS_CLIENT_BUFFER_MB). */
  clientBufferBytes: number;
  /** A client was dropped for its unsent data (the metric). */
  onDropped?: () => void;
}

/**
 * The persona's browser for outside DevTools clients: `GET /json/version` (the discovery route
 * tools read `webSocketDebuggerUrl` from) and a WebSocket at `/devtools/browser/<id>`, both
 * behind the service key or a `full` token. Each connection is a guest of the browser
 * (devtools/guest-mux.ts): it sees and drives the targets it creates, and the pool page whose
 * lease token it presents in `X-Lease` while that lease holds (each command on the page renews
 * it, as an API call does). What it created is closed when it disconnects, when it is dropped for
 * not reading what it is sent (devtools-client.ts), when its token is revoked or expires, and
 * when it leaves before its upgrade is done.
 */
export class CdpEndpoint {
  /** The id in the endpoint's URL: any id is served; this one is the worker's own. */
  private readonly id = crypto.randomUUID();
  private readonly wss = new WebSocketServer({ noServer: true, perMessageDeflate: false });
  private readonly clients = new Set<DevtoolsClient>();
  /** Guest links opened and not yet released: connected clients' and those being upgraded. */
  private readonly links = new Set<GuestLink>();
  private readonly unsubscribe: () => void;

  constructor(private readonly o: CdpEndpointOptions) {
    // A connection opened with a token ends the moment the token is revoked.
    this.unsubscribe = o.auth.revocations.onRevoke((ids) => {
      for (const c of this.clients) {
        if (c.tokenId !== null && ids.has(c.tokenId))
          c.end(POLICY_VIOLATION, 'the token was revoked');
      }
    });
  }

  /** DevTools clients connected, and guest links held (the metrics' gauges). */
  counts(): { clients: number; guestLinks: number } {
    return { clients: this.clients.size, guestLinks: this.links.size };
  }

  /** Whether an upgrade request is for this endpoint. */
  static wants(req: IncomingMessage): boolean {
    const pathname = (req.url ?? '').split('?')[0] ?? '';
    return pathname === CDP_PATH || pathname.startsWith(`${CDP_PATH}/`);
  }

  /** The routes of DevTools discovery. */
  router(): Router {
    const r = express.Router({ caseSensitive: true, strict: false });
    r.get('/json/version', (req, res, next) => {
      this.o.auth.check(req);
      this.o.navigator
        .browserVersion()
        .then((v) => {
          res.setHeader('Cache-Control', 'no-store');
          res.json({
            Browser: v.product,
            'Protocol-Version': v.protocolVersion,
            'User-Agent': v.userAgent,
            'V8-Version': v.jsVersion,
            'WebKit-Version': v.revision,
            webSocketDebuggerUrl: `ws://${req.headers.host ?? 'localhost'}${CDP_PATH}/${this.id}`,
          });
        })
        .catch(next);
    });
    return r;
  }

  /** The `upgrade` listener's part for this endpoint. */
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    socket.on('error', () => undefined);
    let credential: Credential | null;
    try {
      credential = this.o.auth.check(req, accessOf('GET', CDP_PATH));
    } catch (err) {
      if (err instanceof AuthError) return refuseUpgrade(socket, err.status, err.body, err.headers);
      throw err;
    }
    const lease = req.headers['x-lease'];
    const token = typeof lease === 'string' && lease !== '' ? lease : null;
    let opening: Promise<GuestLink>;
    try {
      opening = this.o.navigator.guestMux().open(this.policy(token));
    } catch (err) {
      const status = err instanceof ApiError ? err.status : 500;
      return refuseUpgrade(socket, status, {
        success: false,
        error: errorMessage(err),
        page_id: null,
      });
    }
    opening.then(
      (link) => {
        this.links.add(link);
        // The client went while its link was opened: ws would drop the socket without a word.
        if (socketGone(socket)) {
          socket.destroy();
          void this.release(link).finally(() =>
            this.o.logger.info('devtools client left during the upgrade', {
              credential: credentialName(credential),
              guest_links: this.links.size,
            }),
          );
          return;
        }
        // Its token may have been revoked, or have expired, meanwhile.
        const stale = this.staleToken(credential);
        if (stale) {
          void this.release(link);
          return refuseUpgrade(socket, stale.status, stale.body);
        }
        this.wss.handleUpgrade(req, socket, head, (ws) => this.serve(ws, link, credential));
      },
      (err: unknown) => {
        if (socketGone(socket)) return socket.destroy();
        refuseUpgrade(socket, 503, { success: false, error: errorMessage(err), page_id: null });
      },
    );
  }

  private serve(ws: WebSocket, link: GuestLink, credential: Credential | null): void {
    const client = new DevtoolsClient({
      ws,
      link,
      credential,
      bufferLimit: this.o.clientBufferBytes,
      logger: this.o.logger,
      onDropped: () => this.o.onDropped?.(),
      release: (l) => this.release(l),
      onGone: (c) => this.clients.delete(c),
    });
    this.clients.add(client);
    this.o.logger.info('devtools client connected', {
      clients: this.clients.size,
      credential: client.credential,
    });
  }

  /** Closes a guest link (the targets its client created) and forgets it. */
  private release(link: GuestLink): Promise<void> {
    return link
      .close()
      .catch((err: unknown) => {
        this.o.logger.warn('devtools client left', { err });
      })
      .finally(() => this.links.delete(link));
  }

  /** The refusal of a token revoked or expired since it was checked; null while it holds. */
  private staleToken(c: Credential | null): AuthRefusal | null {
    if (c?.kind !== 'token') return null;
    if (this.o.auth.revocations.has(c.claims.id))
      return new AuthRefusal(401, `${AUTH_INVALID}: the token was revoked`, 'revoked');
    if (c.claims.exp * 1000 <= Date.now())
      return new AuthRefusal(401, `${AUTH_INVALID}: the token has expired`, 'expired');
    return null;
  }

  /** What a connection with lease token `token` may drive of the pool. */
  private policy(token: string | null): GuestPolicy {
    const { navigator } = this.o;
    const notYours = (targetId: string): string =>
      `No target with given id found (or it is not this connection's): ${targetId}`;
    return {
      pageSetup: navigator.guestPageSetup(),
      quietRuntime: this.o.quietRuntime,
      holds: (targetId) => {
        const page = navigator.pageOfTarget(targetId);
        const held = page ? navigator.leases.tokenOf(page.id) : null;
        return token !== null && held !== null && safeEqual(held, token);
      },
      use: (targetId) => {
        const page = navigator.pageOfTarget(targetId);
        if (!page) return notYours(targetId);
        try {
          if (navigator.leases.check(page.id, token ?? undefined)) return null;
        } catch (err) {
          if (err instanceof Locked) return `${err.message}: ${page.id}`;
          throw err;
        }
        return `Page ${page.id} is not leased to this connection: lease it and connect with its token in X-Lease`;
      },
    };
  }

  /** Ends every connection (the worker stops). */
  close(): void {
    this.unsubscribe();
    for (const ws of this.wss.clients) ws.terminate();
    this.wss.close();
  }
}

/** Whether the client's socket is gone (reset, ended, destroyed) before its upgrade. */
function socketGone(socket: Duplex): boolean {
  return socket.destroyed || !socket.readable || !socket.writable;
}
