import http from 'node:http';
import net from 'node:net';
import type { Duplex } from 'node:stream';

/**
 * How long a connection to a worker may wait unused in the pool: well under the 5 s a Node
 * server keeps an idle keep-alive connection by default before it closes it (the worker keeps
 * its own longer; an older worker image may not).
 */
export const IDLE_SOCKET_MS = 2_000;

/**
 * Keep-alive connections to a worker that the door closes itself once idle for IDLE_SOCKET_MS.
 * Node's own agent keeps an idle connection until the server closes it (it reads the server's
 * `Keep-Alive: timeout=5` only when given a timeout of its own, which would then apply to every
 * request too): a request sent at that moment met the closing socket and its caller a 502.
 * Here only an idle socket has a timeout; a request on it clears it.
 */
export class WorkerAgent extends http.Agent {
  /** The TCP keep-alive probes' first delay, as Node's agent gives it (1 s by default). */
  private readonly probeMs: number;

  constructor(options: http.AgentOptions = {}) {
    super({ keepAlive: true, ...options });
    this.probeMs = options.keepAliveMsecs ?? 1000;
  }

  /** Node's pooling, with the idle limit: the agent destroys a free socket that times out. */
  override keepSocketAlive(socket: Duplex): boolean {
    if (!(socket instanceof net.Socket)) return false;
    socket.setKeepAlive(true, this.probeMs);
    socket.unref();
    socket.setTimeout(IDLE_SOCKET_MS);
    return true;
  }

  override reuseSocket(socket: Duplex, request: http.ClientRequest): void {
    super.reuseSocket(socket, request);
    // A request may take as long as it takes: its own deadlines are the caller's.
    if (socket instanceof net.Socket) socket.setTimeout(0);
  }
}
