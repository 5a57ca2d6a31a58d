import fs from 'node:fs';
import http from 'node:http';
import type { Duplex } from 'node:stream';
import { createProxyServer } from 'http-proxy-3';
import { SYSTEM_PATHS } from '@persona-browser/contracts';
import type { Address } from './drivers/types';
import type { Logger } from '@persona-browser/service-kit';
import { errorEnvelope, errorMessage, sendJson } from '@persona-browser/service-kit';
import { BudgetRefusal } from './memory-budget';
import type { PersonaCounters } from './metrics/prometheus';
import type { Persona } from './persona';
import { IdentityWakeError } from './persona';

/** 502 when the proxy or the GeoIP service failed the wake, else 503 (the worker did). */
const wakeStatus = (err: unknown): number => (err instanceof IdentityWakeError ? 502 : 503);

/** A wake the memory budget refused says when to try again. */
const wakeHeaders = (err: unknown): Record<string, string> =>
  err instanceof BudgetRefusal ? { 'retry-after': String(err.retryAfterS) } : {};

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
  error: string,
  headers: Record<string, string> = {},
): void {
  const body = JSON.stringify(errorEnvelope(error));
  const extra = Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('');
  socket.end(
    `HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\ncontent-type: application/json\r\n` +
      `${extra}content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
  );
}

const isUpdateCall = (req: http.IncomingMessage): boolean =>
  req.method === 'GET' && (req.url ?? '').split('?')[0] === SYSTEM_PATHS.update;

/**
 * A persona's port on the host: every HTTP request and WebSocket is streamed to its worker
 * (http-proxy-3, no buffering), waking the worker first when it sleeps. The door counts the
 * persona's activity: requests in flight and open sockets.
 */
export class FrontDoor {
  private readonly proxy = createProxyServer({ xfwd: true, ws: true });
  readonly server: http.Server;
  /** Upgraded sockets: the HTTP server no longer tracks them, so close() ends them here. */
  private readonly upgraded = new Set<Duplex>();

  /**
   * `updateTrigger`: the checkout's `.update-trigger`. A worker in a container touches the file
   * in its own image when `GET /api/v1/system/update` succeeds; the door touches the checkout's,
   * which is the one the supervisor watches.
   */
  constructor(
    private readonly persona: Persona,
    private readonly logger: Logger,
    private readonly updateTrigger: string | null = null,
    private readonly counters: PersonaCounters | null = null,
  ) {
    this.server = http.createServer((req, res) => this.onRequest(req, res));
    this.server.on('upgrade', (req: http.IncomingMessage, socket: Duplex, head: Buffer) =>
      this.onUpgrade(req, socket, head),
    );
    // A client or worker socket that resets (a live view closed mid-frame) is reported on the
    // proxy itself, which throws what no one listens for: it is one warning, never a crash.
    this.proxy.on('error', (err: Error) =>
      this.logger.warn('proxy error', { persona: persona.name, error: err.message }),
    );
    this.proxy.on('proxyRes', (proxyRes: http.IncomingMessage, req: http.IncomingMessage) => {
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

  private onRequest(req: http.IncomingMessage, res: http.ServerResponse): void {
    const persona = this.persona;
    persona.activity.requestStarted();
    const started = performance.now();
    let ended = false;
    res.once('close', () => {
      if (ended) return;
      ended = true;
      persona.activity.requestEnded();
      const status = res.writableFinished ? res.statusCode : null;
      this.counters?.request(persona.name, status, (performance.now() - started) / 1000);
    });
    // A persona whose node is down is answered at once, never left to a connect timeout.
    const down = persona.nodeProblem();
    if (down) {
      sendError(res, 503, `persona ${persona.name} is unavailable: ${down}`);
      return;
    }
    const forward = (target: Address): void => {
      if (res.destroyed) return;
      const to = { host: target.host, port: target.port };
      this.proxy.web(req, res, { target: to, agent: persona.agent }, (err) => {
        this.logger.warn('proxy error', { persona: persona.name, error: err.message });
        const problem = persona.nodeProblem();
        if (problem) sendError(res, 503, `persona ${persona.name} is unavailable: ${problem}`);
        else sendError(res, 502, `persona ${persona.name}: worker did not answer (${err.message})`);
      });
    };
    // A running worker is served at once; only a sleeping one makes the request wait.
    const running = persona.runningAddress();
    if (running) {
      forward(running);
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

  private onUpgrade(req: http.IncomingMessage, socket: Duplex, head: Buffer): void {
    const persona = this.persona;
    persona.activity.socketOpened();
    this.upgraded.add(socket);
    let closed = false;
    socket.once('close', () => {
      this.upgraded.delete(socket);
      if (closed) return;
      closed = true;
      persona.activity.socketClosed();
    });
    socket.on('error', () => undefined);
    const down = persona.nodeProblem();
    if (down) {
      refuseUpgrade(socket, 503, `persona ${persona.name} is unavailable: ${down}`);
      return;
    }
    persona.ensureRunning().then(
      (target) => {
        if (socket.destroyed) return;
        const to = { host: target.host, port: target.port };
        const options = target.agent ? { target: to, agent: target.agent } : { target: to };
        this.proxy.ws(req, socket, head, options, (err) => {
          this.logger.warn('websocket proxy error', { persona: persona.name, error: err.message });
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
    if (!this.updateTrigger) return;
    try {
      fs.writeFileSync(this.updateTrigger, `${new Date().toISOString()}\n`);
    } catch (err) {
      this.logger.error('cannot touch the update trigger', {
        file: this.updateTrigger,
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
