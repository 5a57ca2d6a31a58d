/**
 * The overlay gateway and the waker's tunnel agent over real sockets on this machine: HTTP
 * with keep-alive and a WebSocket upgrade pass through unchanged; a wrong token or a bad first
 * line is refused; a target that never accepts ends the connection at the gateway's connect
 * timeout instead of holding it.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import net from 'node:net';
import { spawn } from 'node:child_process';
import WebSocket, { WebSocketServer } from 'ws';
import { getJson } from '@persona-browser/contracts';
import { TunnelAgent } from '../src/drivers/overlay-tunnel';
import { parseHello, startGateway } from '../src/gateway/main';
import { until } from '@persona-browser/testkit/waker';

const CALLER_MS = 30_000;
const TOKEN = 'a'.repeat(32);
let gateway: net.Server;
let gatewayPort: number;
let worker: http.Server;
let workerPort: number;
let seen: Array<{ url: string; socket: string }>;

const listening = (s: net.Server): Promise<number> =>
  new Promise((resolve) => {
    if (s.listening) resolve((s.address() as AddressInfo).port);
    else s.once('listening', () => resolve((s.address() as AddressInfo).port));
  });

beforeAll(async () => {
  seen = [];
  worker = http.createServer((req, res) => {
    const socket = `${req.socket.remotePort}`;
    seen.push({ url: req.url ?? '', socket });
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ url: req.url, socket }));
  });
  const wss = new WebSocketServer({ server: worker });
  wss.on('connection', (ws) => ws.on('message', (m: Buffer) => ws.send(`echo:${m.toString()}`)));
  worker.listen(0, '127.0.0.1');
  workerPort = await listening(worker);
  gateway = startGateway({ token: TOKEN, port: 0, connectTimeoutMs: 700 });
  gatewayPort = await listening(gateway);
});

afterAll(async () => {
  worker.closeAllConnections();
  await new Promise((r) => worker.close(r));
  await new Promise((r) => gateway.close(r));
});

const agent = (token = TOKEN): TunnelAgent =>
  new TunnelAgent(() => ({ host: '127.0.0.1', port: gatewayPort }), token, { keepAlive: true });

test('HTTP through the tunnel reaches the named worker, and keep-alive reuses one connection', async () => {
  const a = agent();
  try {
    const address = { host: '127.0.0.1', port: workerPort, agent: a };
    const first = (await getJson(address, '/one', 5_000)) as { url: string; socket: string };
    const second = (await getJson(address, '/two', 5_000)) as { url: string; socket: string };
    expect([first.url, second.url]).toEqual(['/one', '/two']);
    // The worker sees the gateway's connection, the same one both times.
    expect(second.socket).toBe(first.socket);
  } finally {
    a.destroy();
  }
});

test('a WebSocket upgrade passes through both ways', async () => {
  const a = agent();
  const ws = new WebSocket(`ws://127.0.0.1:${workerPort}/live`, { agent: a });
  try {
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    const reply = new Promise<string>((resolve) =>
      ws.once('message', (m: Buffer) => resolve(m.toString())),
    );
    ws.send('hello');
    expect(await reply).toBe('echo:hello');
  } finally {
    ws.close();
    a.destroy();
  }
});

test('a wrong token is refused before any byte reaches a worker', async () => {
  const before = seen.length;
  const a = agent('b'.repeat(32));
  try {
    await expect(
      getJson({ host: '127.0.0.1', port: workerPort, agent: a }, '/x', 5_000),
    ).rejects.toThrow();
    expect(seen.length).toBe(before);
  } finally {
    a.destroy();
  }
  expect(parseHello(`${TOKEN} host 80`, TOKEN)).toEqual({ host: 'host', port: 80 });
  expect(parseHello(`${TOKEN} host 0`, TOKEN)).toBeNull();
  expect(parseHello(`${TOKEN} ho/st 80`, TOKEN)).toBeNull();
  expect(parseHello(`${TOKEN} host 80 extra`, TOKEN)).toBeNull();
  expect(parseHello(`wrong host 80`, TOKEN)).toBeNull();
});

/**
 * A listener whose process never accepts (its event loop is held), with its accept queue
 * filled: the kernel drops every further SYN, so a connect neither succeeds nor fails, as with
 * a worker on a node that has gone away.
 */
async function unacceptingPort(): Promise<{ port: number; close: () => void }> {
  const code = [
    "const s = require('net').createServer();",
    "s.listen({ port: 0, host: '127.0.0.1', backlog: 1 }, () => {",
    '  console.log(s.address().port);',
    '  const end = Date.now() + 20000;',
    '  while (Date.now() < end) {}',
    '});',
  ].join('\n');
  const child = spawn(process.execPath, ['-e', code], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve) =>
    child.stdout.once('data', (c: Buffer) => resolve(Number(c.toString().trim()))),
  );
  const fillers: net.Socket[] = [];
  let connected = 0;
  for (let i = 0; i < 4; i++) {
    const f = net.connect(port, '127.0.0.1');
    f.once('connect', () => (connected += 1));
    fillers.push(f);
  }
  // A backlog of 1 queues two connections; the kernel leaves the other two unanswered.
  await until(
    async () => (connected >= 2 ? true : null),
    10_000,
    'two connections queued on the unaccepting listener (its accept queue full)',
  );
  return {
    port,
    close: () => {
      fillers.forEach((f) => f.destroy());
      child.kill('SIGKILL');
    },
  };
}

test('a target that never accepts ends at the connect timeout, not later', async () => {
  const target = await unacceptingPort();
  const a = agent();
  const started = Date.now();
  try {
    await expect(
      getJson({ host: '127.0.0.1', port: target.port, agent: a }, '/', CALLER_MS),
    ).rejects.toThrow();
  } finally {
    a.destroy();
    target.close();
  }
  const took = Date.now() - started;
  // The gateway gave up (700 ms here), long before the caller's own deadline.
  expect(took).toBeGreaterThanOrEqual(600);
  expect(took).toBeLessThan(CALLER_MS / 3);
});

test('a target that refuses ends the connection at once', async () => {
  const closed = net.createServer();
  closed.listen(0, '127.0.0.1');
  const port = await listening(closed);
  await new Promise((r) => closed.close(r));
  const a = agent();
  try {
    await expect(getJson({ host: '127.0.0.1', port, agent: a }, '/', CALLER_MS)).rejects.toThrow(
      /socket hang up|ECONNRESET/,
    );
  } finally {
    a.destroy();
  }
});
