import type { IncomingMessage } from 'node:http';
import net from 'node:net';
import type { Duplex } from 'node:stream';
import { WebSocketServer } from 'ws';
import type { RawData, WebSocket } from 'ws';
import type { Logger } from '@persona-browser/service-kit';
import { RfbClientFilter, RfbProtocolError } from './rfb-filter';

export const WEBSOCKET_PATH = '/vnc/websockify';
/** Bytes queued toward a slow viewer before the VNC server is paused. */
const HIGH_WATER = 4 * 1024 * 1024;
const KEEPALIVE_MS = 30_000;
/** x11vnc may still be starting when the first viewer comes: retry the connection this long. */
const CONNECT_RETRY_MS = 10_000;

/** A VNC server started while viewers are connected (OnDemandVnc). */
export interface VncDemand {
  acquire(): boolean;
  release(): void;
  /** Resolves when the server may be connected to: the last one has exited (never rejects). */
  ready?(): Promise<void>;
}

export interface BridgeOptions {
  /** Port of the VNC server on 127.0.0.1. */
  port: number;
  /** Started for each viewer and released when it leaves, when the server runs on demand. */
  demand?: VncDemand;
  logger: Logger;
  /** Whether this viewer session may send input right now. */
  canInput: (sessionId: string) => boolean;
  /**
   * While this viewer session drives a page it is confined to: the screen row where the page's
   * content begins; null otherwise (RfbClientFilter).
   */
  confinedTop?: (sessionId: string) => number | null;
  /** A session's set of open WebSockets changed. */
  onSockets: (sessionId: string) => void;
}

interface Viewer {
  ws: WebSocket;
  sessionId: string;
  alive: boolean;
}

/**
 * WebSocket ⇄ TCP bridge from the viewer to the VNC server on localhost ("websockify"), with the
 * client's half of the RFB stream passed through RfbClientFilter so that a viewer without
 * control only watches.
 */
export class VncBridge {
  private readonly wss = new WebSocketServer({
    noServer: true,
    perMessageDeflate: false,
    maxPayload: 16 * 1024 * 1024,
  });
  private readonly viewers = new Set<Viewer>();
  private readonly keepalive: NodeJS.Timeout;

  constructor(private readonly o: BridgeOptions) {
    this.keepalive = setInterval(() => this.ping(), KEEPALIVE_MS);
    this.keepalive.unref();
  }

  socketsOf(sessionId: string): number {
    let n = 0;
    for (const v of this.viewers) if (v.sessionId === sessionId) n += 1;
    return n;
  }

  get count(): number {
    return this.viewers.size;
  }

  /** Completes the upgrade for an already authenticated viewer session. */
  accept(req: IncomingMessage, socket: Duplex, head: Buffer, sessionId: string): void {
    this.wss.handleUpgrade(req, socket, head, (ws) => this.bridge(ws, sessionId));
  }

  /** Closes this session's WebSockets (logout). */
  closeSession(sessionId: string): void {
    for (const v of this.viewers) if (v.sessionId === sessionId) v.ws.close(4001, 'session ended');
  }

  close(): void {
    clearInterval(this.keepalive);
    for (const v of this.viewers) v.ws.close(1001, 'worker stopping');
    this.wss.close();
  }

  private ping(): void {
    for (const v of this.viewers) {
      // A viewer that slept or lost its network is noticed, so its control can end.
      if (!v.alive) {
        v.ws.terminate();
        continue;
      }
      v.alive = false;
      v.ws.ping();
    }
  }

  private bridge(ws: WebSocket, sessionId: string): void {
    const viewer: Viewer = { ws, sessionId, alive: true };
    this.viewers.add(viewer);
    // Released once, on the WebSocket's close (which always comes, whatever ends it).
    this.o.demand?.acquire();
    this.o.onSockets(sessionId);
    const filter = new RfbClientFilter(
      () => this.o.canInput(sessionId),
      () => this.o.confinedTop?.(sessionId) ?? null,
    );
    const pending: Buffer[] = [];
    let tcp: net.Socket | null = null;
    let ready = false;
    let closed = false;

    const finish = (code: number, reason: string): void => {
      if (closed) return;
      closed = true;
      tcp?.destroy();
      if (ws.readyState === ws.OPEN || ws.readyState === ws.CONNECTING) ws.close(code, reason);
    };

    ws.on('pong', () => {
      viewer.alive = true;
    });
    ws.on('message', (data: RawData, isBinary: boolean) => {
      if (!isBinary) return finish(1003, 'binary frames only');
      let out: Buffer;
      try {
        out = filter.push(toBuffer(data));
      } catch (err) {
        const why = err instanceof RfbProtocolError ? err.message : 'bad RFB stream';
        this.o.logger.warn('live view closed: unexpected RFB client message', { reason: why });
        return finish(1002, why.slice(0, 100));
      }
      if (!out.length) return;
      if (!tcp || !ready) {
        pending.push(out);
        return;
      }
      if (!tcp.write(out)) {
        ws.pause();
        tcp.once('drain', () => ws.resume());
      }
    });
    ws.on('close', () => {
      closed = true;
      tcp?.destroy();
      this.viewers.delete(viewer);
      this.o.demand?.release();
      this.o.onSockets(sessionId);
    });
    ws.on('error', () => finish(1011, 'websocket error'));

    let started = Date.now();
    const connect = (): void => {
      const sock = net.connect({ host: '127.0.0.1', port: this.o.port });
      tcp = sock;
      sock.setNoDelay(true);
      sock.once('connect', () => {
        if (closed) return sock.destroy();
        ready = true;
        for (const b of pending.splice(0)) sock.write(b);
      });
      sock.on('data', (chunk: Buffer) => {
        if (ws.readyState !== ws.OPEN) return;
        ws.send(chunk, { binary: true }, () => {
          if (sock.isPaused() && ws.bufferedAmount < HIGH_WATER / 2) sock.resume();
        });
        if (ws.bufferedAmount > HIGH_WATER) sock.pause();
      });
      sock.once('error', (err: NodeJS.ErrnoException) => {
        const early = !sock.bytesRead && err.code === 'ECONNREFUSED';
        if (early && !closed && Date.now() - started < CONNECT_RETRY_MS) {
          sock.removeAllListeners('close');
          setTimeout(connect, 250);
          return;
        }
        this.o.logger.warn('live view: VNC server not reachable', {
          port: this.o.port,
          error: err.message,
        });
        finish(1011, 'VNC server not reachable');
      });
      sock.once('close', () => finish(1000, 'VNC server closed the session'));
    };
    // An on-demand server still exiting would take the connection and drop it mid-handshake.
    const gate = this.o.demand?.ready?.();
    if (!gate) return connect();
    void gate.then(() => {
      started = Date.now();
      if (!closed) connect();
    });
  }
}

function toBuffer(data: RawData): Buffer {
  if (Buffer.isBuffer(data)) return data;
  if (Array.isArray(data)) return Buffer.concat(data);
  return Buffer.from(data);
}
