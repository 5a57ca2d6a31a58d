/**
 * A stand-in for the Docker engine's socket that fails, delays, hangs or resets chosen calls a
 * set number of times and forwards everything else to the real engine, so the waker's docker
 * driver can be tested against the faults a busy or broken engine shows. Long-lived answers
 * (the event stream, followed logs) stream through as they come; calls that upgrade their
 * connection (attach, exec start) become a raw byte pipe both ways after the engine's 101.
 */
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Duplex } from 'node:stream';

export const ENGINE_SOCKET = '/var/run/docker.sock';

/** What an armed rule does to a call it catches. */
export type FaultAction =
  /** Answers `status` with `{"message": ...}` as the engine does; the engine never sees it. */
  | { kind: 'fail'; status: number; message?: string }
  /** Forwards the call after `ms`. */
  | { kind: 'delay'; ms: number }
  /** Never answers: the connection stays open until the client gives up or `close()`. */
  | { kind: 'hang' }
  /** Destroys the client's connection without an answer. */
  | { kind: 'reset' };

export interface FaultRule {
  /** HTTP method, any case. */
  method: string;
  /** Tested against the path without its `/v1.xx` prefix and without the query. */
  path: RegExp;
  /** How many of the next matching calls the rule catches. */
  times: number;
  action: FaultAction;
}

export interface FaultHandle {
  /** Calls the rule caught so far. */
  readonly hits: number;
  remaining(): number;
}

/** One call the proxy saw, logged when its outcome is known. */
export interface EngineCall {
  method: string;
  /** Without the `/v1.xx` prefix and the query. */
  path: string;
  /**
   * The engine's status (an upgraded call's 101 included) or the injected one; `hang` when a
   * hang began, `reset` when the connection was destroyed, `error` when the engine could not be
   * reached (or the client left during a delay).
   */
  status: number | 'hang' | 'reset' | 'error';
  /** Whether a rule caught the call. */
  injected: boolean;
  /** When the call arrived (ms since the epoch). */
  at: number;
}

interface Arrival {
  method: string;
  path: string;
  at: number;
  logged: boolean;
}

interface Watcher {
  check(call: EngineCall): void;
  cancel(reason: Error): void;
}

class ArmedRule implements FaultHandle {
  hits = 0;
  private readonly pattern: RegExp;

  constructor(readonly rule: FaultRule) {
    // A global or sticky pattern keeps state between tests; the rule wants a plain one.
    this.pattern = new RegExp(rule.path.source, rule.path.flags.replace(/[gy]/g, ''));
  }

  remaining(): number {
    return Math.max(0, this.rule.times - this.hits);
  }

  catches(method: string, apiPath: string): boolean {
    return (
      this.remaining() > 0 &&
      method === this.rule.method.toUpperCase() &&
      this.pattern.test(apiPath)
    );
  }
}

/** `/v1.41/containers/x/stop?t=5` → `/containers/x/stop`. */
export function apiPathOf(url: string): string {
  const withoutQuery = url.split('?', 1)[0] ?? '';
  return withoutQuery.replace(/^\/v\d+(?:\.\d+)?(?=\/)/, '');
}

/** Connection-scoped headers each hop sets for itself. */
const HOP_HEADERS = new Set(['connection', 'keep-alive', 'proxy-connection']);

function endToEndHeaders(headers: http.IncomingHttpHeaders): http.OutgoingHttpHeaders {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !HOP_HEADERS.has(name)));
}

function engineError(message: string): string {
  return `${JSON.stringify({ message })}\n`;
}

export class DockerFaults {
  /** Every call seen, in the order their outcomes became known. */
  readonly calls: EngineCall[] = [];
  private rules: ArmedRule[] = [];
  private readonly server: http.Server;
  /**
   * Kept-alive engine connections: on a connection the engine closes after its answer, a fast
   * answer can beat the request's own end on the socket, and that end then fails with EPIPE.
   */
  private readonly engineAgent = new http.Agent({ keepAlive: true });
  private readonly sockets = new Set<Duplex>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly watchers = new Set<Watcher>();
  private closed = false;

  private constructor(
    readonly socketPath: string,
    private readonly dir: string,
    private readonly engineSocket: string,
  ) {
    this.server = http.createServer((req, res) => this.onRequest(req, res));
    // Uploads (a build context, attached stdin) may take as long as they take.
    this.server.requestTimeout = 0;
    this.server.on('connection', (socket: net.Socket) => this.track(socket));
    this.server.on('upgrade', (req: http.IncomingMessage, socket: Duplex, head: Buffer) =>
      this.onUpgrade(req, socket, head),
    );
  }

  /** Listens on a fresh socket in a temporary folder, forwarding to `engineSocket`. */
  static async start(engineSocket: string = ENGINE_SOCKET): Promise<DockerFaults> {
    const dir = await fs.promises.mkdtemp(path.join(os.tmpdir(), 'docker-faults-'));
    const faults = new DockerFaults(path.join(dir, 'docker.sock'), dir, engineSocket);
    await new Promise<void>((resolve, reject) => {
      faults.server.once('error', reject);
      faults.server.listen(faults.socketPath, () => {
        faults.server.off('error', reject);
        resolve();
      });
    });
    return faults;
  }

  /** What a child process takes as `DOCKER_HOST`. */
  get dockerHost(): string {
    return `unix://${this.socketPath}`;
  }

  /** Arms a rule; earlier rules catch a call first. */
  inject(rule: FaultRule): FaultHandle {
    if (!(rule.times >= 0)) throw new Error(`a fault rule needs times >= 0, not ${rule.times}`);
    const armed = new ArmedRule(rule);
    this.rules.push(armed);
    return armed;
  }

  /** Drops every rule; calls already caught keep their fate (a hang stays hung). */
  clear(): void {
    this.rules = [];
  }

  /** Resolves with the first call `predicate` accepts, logged already or yet to come. */
  waitFor(
    predicate: (call: EngineCall) => boolean,
    timeoutMs: number,
    what: string,
  ): Promise<EngineCall> {
    const seen = this.calls.find(predicate);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.watchers.delete(watcher);
        const last = this.calls.slice(-8).map((c) => `${c.method} ${c.path} ${c.status}`);
        reject(
          new Error(
            `${what}: not seen within ${timeoutMs} ms (last calls: ${last.join('; ') || 'none'})`,
          ),
        );
      }, timeoutMs);
      const watcher: Watcher = {
        check: (call) => {
          if (!predicate(call)) return;
          clearTimeout(timer);
          this.watchers.delete(watcher);
          resolve(call);
        },
        cancel: (reason) => {
          clearTimeout(timer);
          reject(reason);
        },
      };
      this.watchers.add(watcher);
    });
  }

  /** Stops listening, ends every connection (hung ones too) and removes the socket's folder. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.rules = [];
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    for (const watcher of this.watchers) watcher.cancel(new Error('the fault proxy closed'));
    this.watchers.clear();
    const stopped = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const socket of this.sockets) socket.destroy();
    this.engineAgent.destroy();
    await stopped;
    await fs.promises.rm(this.dir, { recursive: true, force: true });
  }

  private track(socket: Duplex): void {
    if (this.closed) {
      socket.destroy();
      return;
    }
    if (this.sockets.has(socket)) return;
    this.sockets.add(socket);
    socket.once('close', () => this.sockets.delete(socket));
  }

  /** Runs `run` no sooner than `ms` from now (a timer may fire a fraction of a ms early). */
  private later(ms: number, run: () => void): void {
    const due = performance.now() + ms;
    const arm = (wait: number): void => {
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        const left = due - performance.now();
        if (left > 0) arm(Math.ceil(left));
        else run();
      }, wait);
      this.timers.add(timer);
    };
    arm(ms);
  }

  private arrive(req: http.IncomingMessage): { arrival: Arrival; rule: ArmedRule | undefined } {
    const method = (req.method ?? 'GET').toUpperCase();
    const arrival = { method, path: apiPathOf(req.url ?? '/'), at: Date.now(), logged: false };
    const rule = this.rules.find((r) => r.catches(method, arrival.path));
    if (rule) rule.hits += 1;
    return { arrival, rule };
  }

  private log(arrival: Arrival, status: EngineCall['status'], injected: boolean): void {
    if (arrival.logged) return;
    arrival.logged = true;
    const call = { method: arrival.method, path: arrival.path, status, injected, at: arrival.at };
    this.calls.push(call);
    for (const watcher of [...this.watchers]) watcher.check(call);
  }

  private onRequest(req: http.IncomingMessage, res: http.ServerResponse): void {
    const { arrival, rule } = this.arrive(req);
    if (!rule) return this.forward(req, res, arrival, false);
    const action = rule.rule.action;
    switch (action.kind) {
      case 'fail': {
        const body = engineError(action.message ?? `injected fault (${action.status})`);
        res.writeHead(action.status, {
          'Content-Type': 'application/json',
          'Content-Length': Buffer.byteLength(body),
        });
        res.end(body);
        return this.log(arrival, action.status, true);
      }
      case 'delay':
        return this.later(action.ms, () => {
          if (req.socket.destroyed) return this.log(arrival, 'error', true);
          this.forward(req, res, arrival, true);
        });
      case 'hang':
        return this.log(arrival, 'hang', true);
      case 'reset':
        req.socket.destroy();
        return this.log(arrival, 'reset', true);
    }
  }

  private forward(
    req: http.IncomingMessage,
    res: http.ServerResponse,
    arrival: Arrival,
    injected: boolean,
  ): void {
    const upstream = http.request({
      socketPath: this.engineSocket,
      method: req.method,
      path: req.url,
      headers: endToEndHeaders(req.headers),
      agent: this.engineAgent,
    });
    upstream.on('socket', (socket) => this.track(socket));
    upstream.on('response', (answer) => {
      this.log(arrival, answer.statusCode ?? 0, injected);
      res.writeHead(
        answer.statusCode ?? 502,
        answer.statusMessage,
        endToEndHeaders(answer.headers),
      );
      // The event stream's headers come long before its first event: the client waits for them.
      res.flushHeaders();
      answer.on('error', () => res.destroy());
      answer.pipe(res);
    });
    upstream.on('error', (err) => {
      this.log(arrival, 'error', injected);
      if (res.headersSent) {
        res.destroy();
        return;
      }
      const body = engineError(`the fault proxy could not reach the engine: ${err.message}`);
      res.writeHead(502, { 'Content-Type': 'application/json' });
      res.end(body);
    });
    // A client that leaves mid-stream (an event reader done reading) ends the engine's side too.
    res.on('close', () => {
      if (!res.writableFinished) upstream.destroy();
    });
    req.pipe(upstream);
  }

  private onUpgrade(req: http.IncomingMessage, client: Duplex, head: Buffer): void {
    client.on('error', () => client.destroy());
    const { arrival, rule } = this.arrive(req);
    if (!rule) return this.tunnel(req, client, head, arrival, false);
    const action = rule.rule.action;
    switch (action.kind) {
      case 'fail': {
        const body = engineError(action.message ?? `injected fault (${action.status})`);
        const reason = http.STATUS_CODES[action.status] ?? 'Error';
        client.end(
          `HTTP/1.1 ${action.status} ${reason}\r\nContent-Type: application/json\r\n` +
            `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
        );
        return this.log(arrival, action.status, true);
      }
      case 'delay':
        return this.later(action.ms, () => {
          if (client.destroyed) return this.log(arrival, 'error', true);
          this.tunnel(req, client, head, arrival, true);
        });
      case 'hang':
        return this.log(arrival, 'hang', true);
      case 'reset':
        client.destroy();
        return this.log(arrival, 'reset', true);
    }
  }

  /** Replays the request head to the engine, then pipes raw bytes both ways. */
  private tunnel(
    req: http.IncomingMessage,
    client: Duplex,
    head: Buffer,
    arrival: Arrival,
    injected: boolean,
  ): void {
    // Half-open both ways: exec's stdin ends before its output does.
    const engine = net.connect({ path: this.engineSocket, allowHalfOpen: true });
    this.track(engine);
    const lines = [`${req.method} ${req.url} HTTP/${req.httpVersion}`];
    for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) {
      lines.push(`${req.rawHeaders[i]}: ${req.rawHeaders[i + 1]}`);
    }
    engine.write(`${lines.join('\r\n')}\r\n\r\n`);
    if (head.length > 0) engine.write(head);
    engine.once('data', (chunk: Buffer) => {
      const status = /^HTTP\/\d\.\d (\d{3})/.exec(chunk.toString('latin1'))?.[1];
      this.log(arrival, status === undefined ? 'error' : Number(status), injected);
    });
    engine.on('error', () => {
      this.log(arrival, 'error', injected);
      client.destroy();
    });
    engine.on('close', () => {
      if (!client.writableEnded) client.end();
    });
    client.on('close', () => engine.destroy());
    engine.pipe(client);
    client.pipe(engine);
  }
}
