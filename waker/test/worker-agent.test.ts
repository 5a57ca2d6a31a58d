import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { until } from '@persona-browser/testkit/waker';
import { IDLE_SOCKET_MS, WorkerAgent } from '../src/drivers/worker-agent';

/**
 * The door's connections to a worker: kept alive for the next request, closed by the door once
 * idle for IDLE_SOCKET_MS, before the worker's server would close them under a request (the
 * 502 a caller met when both happened at once). Against a real Node server on loopback.
 */

interface Server {
  port: number;
  /** When each connection the server accepted was ended by the client (ms since the epoch). */
  endedByClient: number[];
  accepted: () => number;
  close: () => Promise<void>;
}

async function startServer(answerAfterMs = 0): Promise<Server> {
  const endedByClient: number[] = [];
  let accepted = 0;
  const server = http.createServer((_req, res) => {
    setTimeout(() => res.end('ok'), answerAfterMs);
  });
  // Longer than any wait here: a connection that ends was ended by the client.
  server.keepAliveTimeout = 60_000;
  server.on('connection', (socket) => {
    accepted += 1;
    socket.on('end', () => endedByClient.push(Date.now()));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as AddressInfo).port,
    endedByClient,
    accepted: () => accepted,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

function get(port: number, agent: http.Agent): Promise<string> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path: '/', agent }, (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve(body));
      })
      .on('error', reject);
  });
}

test('back-to-back requests share one connection; idle, the door closes it itself', async () => {
  const server = await startServer();
  const agent = new WorkerAgent();
  try {
    expect(await get(server.port, agent)).toBe('ok');
    expect(await get(server.port, agent)).toBe('ok');
    expect(server.accepted()).toBe(1);
    const freeAt = Date.now();
    const endedAt = await until(
      async () => server.endedByClient[0] ?? null,
      IDLE_SOCKET_MS * 5,
      'the idle connection ended by the door',
    );
    expect(endedAt - freeAt).toBeGreaterThanOrEqual(IDLE_SOCKET_MS - 50);
    // The next request opens a new connection and is served.
    expect(await get(server.port, agent)).toBe('ok');
    expect(server.accepted()).toBe(2);
  } finally {
    agent.destroy();
    await server.close();
  }
});

test('control: Node’s own keep-alive agent leaves the idle connection open for the server to close', async () => {
  const server = await startServer();
  const agent = new http.Agent({ keepAlive: true });
  try {
    expect(await get(server.port, agent)).toBe('ok');
    // Time itself is tested: well past the door's idle limit, nothing has ended it.
    await new Promise((r) => setTimeout(r, IDLE_SOCKET_MS * 2));
    expect(server.endedByClient).toEqual([]);
  } finally {
    agent.destroy();
    await server.close();
  }
});

test('a request on a kept connection may take longer than the idle limit', async () => {
  const server = await startServer(IDLE_SOCKET_MS + 1_000);
  const agent = new WorkerAgent();
  try {
    expect(await get(server.port, agent)).toBe('ok');
    expect(await get(server.port, agent)).toBe('ok');
    expect(server.accepted()).toBe(1);
    expect(server.endedByClient).toEqual([]);
  } finally {
    agent.destroy();
    await server.close();
  }
});
