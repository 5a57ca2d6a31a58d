import crypto from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import express from 'express';
import type { Router } from 'express';
import { WebSocketServer } from 'ws';
import type { RawData, WebSocket } from 'ws';
import type { Logger } from '@persona-browser/service-kit';
import { AuthError, accessOf, errorMessage, safeEqual } from '@persona-browser/service-kit';
import type { Authenticator } from '../http/auth';
import type { GuestLink } from '../browser/cdp/guest-link';
import type { GuestPolicy } from '../browser/cdp/guest-policy';
import type { Navigator } from '../browser/navigator';
import { ApiError, Locked } from '../errors';
import { refuseUpgrade } from '../http/refuse-upgrade';

/** Where DevTools clients connect, as Chromium names its own browser endpoint. */
export const CDP_PATH = '/devtools/browser';

export interface CdpEndpointOptions {
  navigator: Navigator;
  /** The worker's door: DevTools needs the key or a `full` token of this persona. */
  auth: Authenticator;
  logger: Logger;
  /** Keep each client's `Runtime.enable` from its pages (DEVTOOLS_QUIET_RUNTIME). */
  quietRuntime: boolean;
}

/**
 * The persona's browser for outside DevTools clients: `GET /json/version` (the discovery route
 * tools read `webSocketDebuggerUrl` from) and a WebSocket at `/devtools/browser/<id>`, both
 * behind the service key. Each connection is a guest of the browser (browser/cdp/guest-mux.ts):
 * it sees and drives the targets it creates, and the pool page whose lease token it presents in
 * `X-Lease` while that lease holds (each command on the page renews it, as an API call does).
 * What it created is closed when it disconnects.
 */
export class CdpEndpoint {
  /** The id in the endpoint's URL: any id is served; this one is the worker's own. */
  private readonly id = crypto.randomUUID();
  private readonly wss = new WebSocketServer({ noServer: true, perMessageDeflate: false });
  private readonly sockets = new Set<WebSocket>();

  constructor(private readonly o: CdpEndpointOptions) {}

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
    try {
      this.o.auth.check(req, accessOf('GET', CDP_PATH));
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
      (link) => this.wss.handleUpgrade(req, socket, head, (ws) => this.serve(ws, link)),
      (err: unknown) =>
        refuseUpgrade(socket, 503, { success: false, error: errorMessage(err), page_id: null }),
    );
  }

  private serve(ws: WebSocket, link: GuestLink): void {
    this.sockets.add(ws);
    this.o.logger.info('devtools client connected', { clients: this.sockets.size });
    link.onmessage = (text) => ws.send(text);
    link.onclose = () => ws.close(1001, 'the browser went');
    ws.on('message', (data: RawData) => link.fromClient(rawText(data)));
    ws.on('error', () => undefined);
    ws.on('close', () => {
      this.sockets.delete(ws);
      link.onclose = null;
      const created = link.created.length;
      link
        .close()
        .catch((err: unknown) => this.o.logger.warn('devtools client left', { err }))
        .finally(() =>
          this.o.logger.info('devtools client disconnected', { closed_targets: created }),
        );
    });
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
    for (const ws of this.sockets) ws.terminate();
    this.wss.close();
  }
}

function rawText(data: RawData): string {
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  return Buffer.isBuffer(data) ? data.toString('utf8') : Buffer.from(data).toString('utf8');
}
