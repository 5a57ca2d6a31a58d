import fs from 'node:fs';
import http from 'node:http';
import type { Duplex } from 'node:stream';
import { createProxyServer } from 'http-proxy-3';
import { SYSTEM_PATHS } from '@persona-browser/contracts';
import type { Address } from '../drivers/types';
import type { AccessNeed, AuthGuard, Logger } from '@persona-browser/service-kit';
import {
  AUTH_INVALID,
  AuthRefusal,
  accessOf,
  errorEnvelope,
  errorMessage,
  sendJson,
} from '@persona-browser/service-kit';
import type { PersonaCounters, RefusalCounter } from '../metrics/prometheus';
import type { Persona } from '../persona/persona';
import { IdentityWakeError, WakeError } from '../persona/persona';
import { asleepPage } from './asleep-page';
import type { AsleepAnswers } from './asleep';

/** Where the persona's panel keeps its key in a browser (ui/key-card.js, KEY_NAMES.worker). */
const PANEL_KEY_NAME = 'persona-browser.api-key';

/** 502 when the proxy or the GeoIP service failed the wake, else 503 (the worker did). */
const wakeStatus = (err: unknown): number => (err instanceof IdentityWakeError ? 502 : 503);

/** A wake that cannot happen now says when to try again (the budget, the back-off). */
const wakeHeaders = (err: unknown): Record<string, string> =>
  err instanceof WakeError && err.retryAfterS !== null
    ? { 'retry-after': String(err.retryAfterS) }
    : {};

/** The API's error envelope, for the few answers the front door gives itself. */
function sendError(
  res: http.ServerResponse,
  status: number,
  error: string,
  headers: Record<string, string> = {},
): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  sendJson(res, status, errorEnvelope(error), headers);
}

function refuseUpgrade(
  socket: Duplex,
  status: number,
  error: string | { detail: string },
  headers: Record<string, string> = {},
): void {
  const body = JSON.stringify(typeof error === 'string' ? errorEnvelope(error) : error);
  const extra = Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('');
  socket.end(
    `HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\ncontent-type: application/json\r\n` +
      `${extra}content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
  );
}

/**
 * How long a page load keeps its persona in use: the page's scripts, styles and first calls
 * follow it, seconds apart on a slow or busy client, and none of them may find the persona
 * gone to sleep in between (a live view with no script, IDLE_TIMEOUT of a few seconds).
 */
const PAGE_LOAD_HOLD_MS = 15_000;

/** How soon a client may try again a persona whose node has a problem. */
const NODE_RETRY_AFTER_S = '5';

/** Errors of a connection that never carried an answer: the worker's node may be gone. */
const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'EHOSTUNREACH',
  'EHOSTDOWN',
  'ENETUNREACH',
  'ETIMEDOUT',
]);

const connectionFailed = (err: NodeJS.ErrnoException): boolean =>
  err.code !== undefined && CONNECTION_CODES.has(err.code);

const isUpdateCall = (req: http.IncomingMessage): boolean =>
  req.method === 'GET' && (req.url ?? '').split('?')[0] === SYSTEM_PATHS.update;

export interface FrontDoorOptions {
  persona: Persona;
  logger: Logger;
  /**
   * The checkout's `.update-trigger`. A worker in a container touches the file in its own image
   * when `GET /api/v1/system/update` succeeds; the door touches the checkout's, which is the
   * one the supervisor watches.
   */
  updateTrigger?: string | null;
  counters?: PersonaCounters | null;
  /** The credential check every door of this waker shares (one throttle of failed attempts). */
  guard: AuthGuard;
  refusals?: RefusalCounter | null;
  /** The public routes' answers while the persona's worker is not running. */
  asleep: AsleepAnswers;
}

/**
 * A persona's port on the host: every HTTP request and WebSocket is streamed to its worker
 * (http-proxy-3, no buffering), waking the worker first when it sleeps, but only for a request
 * that carries a credential opening what it asks (service-kit's `accessOf`): nothing wakes a
 * persona without its key or a token of it. While the worker is not running, the public routes
 * are answered here (AsleepAnswers) and a page load gets a page that wakes it only with a
 * credential (asleep-page.ts). The door counts the persona's activity, requests in flight and
 * open sockets, only for calls it let through with a credential: a monitor's status polls and a
 * scanner's refused knocks never keep a persona awake.
 */
export class FrontDoor {
  private readonly proxy = createProxyServer({ xfwd: true, ws: true });
  readonly server: http.Server;
  /** Upgraded sockets: the HTTP server no longer tracks them, so close() ends them here. */
  private readonly upgraded = new Set<Duplex>();
  private readonly persona: Persona;
  private readonly logger: Logger;
  /** Requests the worker began to answer: an error after that is no connection failure. */
  private readonly answered = new WeakSet<http.IncomingMessage>();

  constructor(private readonly o: FrontDoorOptions) {
    this.persona = o.persona;
    this.logger = o.logger;
    const persona = o.persona;
    this.server = http.createServer((req, res) => this.onRequest(req, res));
    this.server.on('upgrade', (req: http.IncomingMessage, socket: Duplex, head: Buffer) =>
      this.onUpgrade(req, socket, head),
    );
    // A client or worker socket that resets (a live view closed mid-frame) is reported on the
    // proxy itself, which throws what no one listens for: it is one warning, never a crash.
    this.proxy.on('error', (err: Error) =>
      this.logger.warn('proxy error', { persona: persona.name, error: err.message }),
    );
    // `Connection` is the client's own hop: passed on, a client's `close` went to the worker
    // over a pooled keep-alive connection, and after an answer that says keep-alive itself (an
    // MCP event stream) the pool reused a connection the worker had closed: the next call met a
    // bare 400. The door keeps its own connections to the worker.
    this.proxy.on('proxyReq', (proxyReq: http.ClientRequest) =>
      proxyReq.removeHeader('connection'),
    );
    this.proxy.on('proxyRes', (proxyRes: http.IncomingMessage, req: http.IncomingMessage) => {
      this.answered.add(req);
      if (proxyRes.statusCode === 200 && isUpdateCall(req)) this.touchTrigger();
    });
    // A request that reaches the worker and back needs no timeout of ours.
    this.server.requestTimeout = 0;
    this.server.headersTimeout = 60_000;
  }

  /** Listens on the persona's port on every interface; rejects with the listen error. */
  listen(): Promise<void> {
    return new Promise((resolve, reject) => {
      const onError = (err: Error): void => reject(err);
      this.server.once('error', onError);
      this.server.listen(this.persona.spec.port, () => {
        this.server.off('error', onError);
        this.server.on('error', (err) =>
          this.logger.error('front door error', { persona: this.persona.name, error: err.message }),
        );
        resolve();
      });
    });
  }

  /**
   * Whether the request may go on: `pass` (public: it needs no credential, and a status read
   * never wakes, whatever it carries), `admitted` (its credential opens it), `cookie` (a live-view
   * call with only the viewer's session cookie: the running worker checks it), or null once it
   * was refused here through `refuse`.
   */
  private admit(
    req: http.IncomingMessage,
    need: AccessNeed,
    refuse: (err: AuthRefusal) => void,
  ): 'pass' | 'admitted' | 'cookie' | null {
    const bearer = req.headers.authorization !== undefined;
    if (need.access === 'status' || (need.access === 'static' && !bearer)) return 'pass';
    if (need.cookie && !bearer && req.headers.cookie) {
      if (this.persona.runningAddress()) return 'cookie';
      refuse(
        new AuthRefusal(
          401,
          `${AUTH_INVALID}: the live-view session ended with the worker`,
          'invalid',
        ),
      );
      return null;
    }
    const presented = {
      authorization: req.headers.authorization,
      address: req.socket.remoteAddress,
    };
    try {
      // A page load with a credential wakes for any credential of this persona, whatever its
      // scope: a live-view link's token opens the viewer's page.
      if (need.access === 'static') this.o.guard.checkHolder(presented, this.persona.name);
      else this.o.guard.check(presented, need, this.persona.name);
      return 'admitted';
    } catch (err) {
      if (!(err instanceof AuthRefusal)) throw err;
      refuse(err);
      return null;
    }
  }

  private onRequest(req: http.IncomingMessage, res: http.ServerResponse): void {
    const persona = this.persona;
    const started = performance.now();
    const need = accessOf(req.method ?? 'GET', req.url ?? '/');
    let counted = false;
    res.once('close', () => {
      if (counted) persona.activity.requestEnded();
      const status = res.writableFinished ? res.statusCode : null;
      this.o.counters?.request(persona.name, status, (performance.now() - started) / 1000);
    });
    const admitted = this.admit(req, need, (err) => {
      this.o.refusals?.refused('persona', err.reason);
      sendJson(res, err.status, err.body, err.headers);
    });
    if (admitted === null) return;
    // A page's own scripts and styles, fetched by a browser that loaded the page from here,
    // count too: a viewer opened just before the idle timeout must finish loading, not lose
    // its worker between two of its files. A scanner's bare `GET /` sends no such header.
    const pagePart =
      admitted === 'pass' &&
      need.access === 'static' &&
      req.headers['sec-fetch-site'] === 'same-origin' &&
      persona.runningAddress() !== null;
    if (admitted !== 'pass' || pagePart) {
      counted = true;
      persona.activity.requestStarted();
    }
    // A page asked for with a credential (the asleep page's wake, then its reload) or loaded
    // from a page of this port: its files and first calls are still to come.
    const document = req.headers['sec-fetch-dest'] === 'document';
    if (need.access === 'static' && (admitted === 'admitted' || (pagePart && document)))
      persona.activity.hold(PAGE_LOAD_HOLD_MS);
    const forward = (target: Address): void => {
      if (res.destroyed) return;
      const to = { host: target.host, port: target.port };
      this.proxy.web(req, res, { target: to, agent: persona.agent }, (err) => {
        this.logger.warn('proxy error', { persona: persona.name, error: err.message });
        // No answer came on the connection, and the client still waits: the waker's own word
        // that the worker's node may be gone, before the cluster's (the driver decides).
        if (!this.answered.has(req) && !res.destroyed && connectionFailed(err))
          persona.workerUnreachable(err);
        const problem = persona.nodeProblem();
        if (problem) this.nodeUnavailable(res, problem);
        else sendError(res, 502, `persona ${persona.name}: worker did not answer (${err.message})`);
      });
    };
    // A persona whose node has a problem is answered at once, never left to a connect timeout.
    const down = persona.nodeProblem();
    // A running worker is served at once; only a sleeping one makes the request wait.
    const running = persona.runningAddress();
    if (running && !down) {
      forward(running);
      return;
    }
    if (admitted === 'pass' && !running) {
      // Public, and the worker is not running: answered here, and nothing wakes.
      if (need.access === 'status') void this.o.asleep.answer(persona, req, res);
      else this.asleepPage(req, res);
      return;
    }
    if (down) {
      this.nodeUnavailable(res, down);
      return;
    }
    persona
      .ensureRunning()
      .then(forward, (err: unknown) =>
        sendError(
          res,
          wakeStatus(err),
          `persona ${persona.name} could not be woken: ${errorMessage(err)}`,
          wakeHeaders(err),
        ),
      );
  }

  /** The persona's node has a problem (down, or not answering the waker): 503 naming it. */
  private nodeUnavailable(res: http.ServerResponse, problem: string): void {
    sendError(res, 503, `persona ${this.persona.name} is unavailable: ${problem}`, {
      'retry-after': NODE_RETRY_AFTER_S,
    });
  }

  /** A page load of a persona that sleeps: HTML for a browser, else the envelope; no wake. */
  private asleepPage(req: http.IncomingMessage, res: http.ServerResponse): void {
    const persona = this.persona;
    if (!/text\/html/.test(req.headers.accept ?? '')) {
      sendError(
        res,
        503,
        `persona ${persona.name} is ${persona.state}: a call with its key or a token wakes it`,
        { 'retry-after': '5' },
      );
      return;
    }
    const html = asleepPage(persona.name, persona.state, PANEL_KEY_NAME);
    res.writeHead(200, {
      'content-type': 'text/html; charset=utf-8',
      'content-length': String(Buffer.byteLength(html)),
      'cache-control': 'no-store',
    });
    res.end(req.method === 'HEAD' ? undefined : html);
  }

  private onUpgrade(req: http.IncomingMessage, socket: Duplex, head: Buffer): void {
    const persona = this.persona;
    this.upgraded.add(socket);
    let counted = false;
    socket.once('close', () => {
      this.upgraded.delete(socket);
      if (counted) persona.activity.socketClosed();
    });
    socket.on('error', () => undefined);
    // No WebSocket is public: one to a page's address needs a credential like any call.
    const asked = accessOf('GET', req.url ?? '/');
    const need: AccessNeed =
      asked.access === 'status' || asked.access === 'static' ? { ...asked, access: 'full' } : asked;
    const admitted = this.admit(req, need, (err) => {
      this.o.refusals?.refused('persona', err.reason);
      refuseUpgrade(socket, err.status, err.body, err.headers);
    });
    if (admitted === null) return;
    counted = true;
    persona.activity.socketOpened();
    const down = persona.nodeProblem();
    if (down) {
      refuseUpgrade(socket, 503, `persona ${persona.name} is unavailable: ${down}`, {
        'retry-after': NODE_RETRY_AFTER_S,
      });
      return;
    }
    persona.ensureRunning().then(
      (target) => {
        if (socket.destroyed) return;
        const to = { host: target.host, port: target.port };
        const options = target.agent ? { target: to, agent: target.agent } : { target: to };
        this.proxy.ws(req, socket, head, options, (err) => {
          this.logger.warn('websocket proxy error', { persona: persona.name, error: err.message });
          if (!this.answered.has(req) && !socket.destroyed && connectionFailed(err))
            persona.workerUnreachable(err);
          socket.destroy();
        });
      },
      (err: unknown) =>
        refuseUpgrade(
          socket,
          wakeStatus(err),
          `persona ${persona.name} could not be woken: ${errorMessage(err)}`,
          wakeHeaders(err),
        ),
    );
  }

  private touchTrigger(): void {
    const trigger = this.o.updateTrigger;
    if (!trigger) return;
    try {
      fs.writeFileSync(trigger, `${new Date().toISOString()}\n`);
    } catch (err) {
      this.logger.error('cannot touch the update trigger', {
        file: trigger,
        error: errorMessage(err),
      });
    }
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
      for (const s of this.upgraded) s.destroy();
      this.proxy.close();
    });
  }
}
