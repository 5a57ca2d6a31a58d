import net from 'node:net';
import type { RunningWorker } from '@persona-browser/testkit/worker';
import { KEY, startWorker } from '@persona-browser/testkit/worker';
import { createPersonaClient, httpTransport, NoAnswer } from '../src';

/**
 * httpTransport, the client's fetch over Node's http with a deadline: what the MCP server, the
 * waker and the supervisor call a persona with. Against a real worker (the key, no key, the
 * headers every call carries) and against a socket that accepts and never answers, as a
 * container's port proxy may (the deadline, the caller's abort).
 */

let w: RunningWorker;

beforeAll(async () => {
  w = await startWorker();
  await w.waitInitialized();
});
afterAll(async () => {
  await w?.stop();
});

/** Resolves once `count()` reaches `n`, checked whenever `changed` is told. */
function once(count: () => number, n: number, changed: Set<() => void>): Promise<void> {
  return new Promise((resolve) => {
    const check = (): void => {
      if (count() < n) return;
      changed.delete(check);
      resolve();
    };
    changed.add(check);
    check();
  });
}

/** A TCP port that accepts connections and never answers; counts connections and hang-ups. */
async function silentPort(): Promise<{
  url: string;
  /** Resolves once `n` connections came (or `n` were hung up). */
  connected: (n: number) => Promise<void>;
  hungUp: (n: number) => Promise<void>;
  close: () => Promise<void>;
}> {
  const sockets = new Set<net.Socket>();
  const seen = { connections: 0, hangUps: 0 };
  const changed = new Set<() => void>();
  const tell = (): void => [...changed].forEach((f) => f());
  const server = net.createServer((socket) => {
    sockets.add(socket);
    seen.connections += 1;
    socket.on('close', () => {
      sockets.delete(socket);
      seen.hangUps += 1;
      tell();
    });
    socket.resume();
    tell();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('the silent port has no address');
  return {
    url: `http://127.0.0.1:${address.port}`,
    connected: (n) => once(() => seen.connections, n, changed),
    hungUp: (n) => once(() => seen.hangUps, n, changed),
    close: () =>
      new Promise((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** The rejection of `call`, which must reject. */
async function rejectionOf(call: Promise<unknown>): Promise<unknown> {
  return call.then(
    (value) => {
      throw new Error(`expected a rejection, got ${JSON.stringify(value)}`);
    },
    (err: unknown) => err,
  );
}

describe('against a worker', () => {
  test('the key is sent as a bearer token; with none the worker answers a typed 401', async () => {
    const fetch = httpTransport({ timeoutMs: 10_000 });
    const keyed = createPersonaClient({ baseUrl: w.url, key: KEY, fetch });
    const started = await keyed.result(keyed.GET('/api/v1/system/stop'));
    expect(started).toMatchObject({ ok: true, status: 200, data: { success: true } });
    const back = await keyed.result(keyed.GET('/api/v1/system/start'));
    expect(back).toMatchObject({ ok: true, status: 200 });

    const keyless = createPersonaClient({ baseUrl: w.url, key: null, fetch });
    const refused = await keyless.result(keyless.GET('/api/v1/system/start'));
    expect(refused).toMatchObject({ ok: false, status: 401, body: { detail: expect.any(String) } });
    // Ping is public: the same client without a key reads it.
    const ping = await keyless.result(keyless.GET('/api/v1/system/ping'));
    expect(ping).toMatchObject({ ok: true, status: 200 });
  });

  test("a worker's error envelope and status come back as the client's Failure", async () => {
    const pb = createPersonaClient({
      baseUrl: w.url,
      key: KEY,
      fetch: httpTransport({ timeoutMs: 10_000 }),
    });
    const missing = await pb.result(
      pb.POST('/api/v1/ops/{page_id}/navigate', {
        params: { path: { page_id: 'no-such-page' } },
        body: { url: 'about:blank' },
      }),
    );
    expect(missing).toMatchObject({
      ok: false,
      status: 404,
      error: expect.stringMatching(/not found/i),
    });
    expect(missing.ok || missing.body).toMatchObject({ success: false });
  });
});

describe('against a port that never answers', () => {
  test('past the deadline the call rejects with NoAnswer naming the address, and hangs up', async () => {
    const port = await silentPort();
    try {
      const pb = createPersonaClient({
        baseUrl: port.url,
        key: KEY,
        fetch: httpTransport({ timeoutMs: 300 }),
      });
      const err = await rejectionOf(pb.GET('/api/v1/system/status'));
      expect(err).toBeInstanceOf(NoAnswer);
      expect(String(err)).toContain(`no answer from ${port.url} in time`);
      await port.hungUp(1);
    } finally {
      await port.close();
    }
  });

  test("a call's own fetch sets its own deadline; the caller's abort rejects with its reason", async () => {
    const port = await silentPort();
    try {
      const pb = createPersonaClient({
        baseUrl: port.url,
        key: KEY,
        fetch: httpTransport({ timeoutMs: 60_000 }),
      });
      const short = await rejectionOf(
        pb.GET('/api/v1/system/status', { fetch: httpTransport({ timeoutMs: 200 }) }),
      );
      expect(short).toBeInstanceOf(NoAnswer);
      await port.hungUp(1);

      const stop = new AbortController();
      const call = rejectionOf(pb.GET('/api/v1/system/status', { signal: stop.signal }));
      // Aborted once the request is on the wire, waiting for its answer.
      await port.connected(2);
      stop.abort(new Error('the caller stopped'));
      const aborted = await call;
      expect(aborted).not.toBeInstanceOf(NoAnswer);
      expect(String(aborted)).toContain('the caller stopped');
      await port.hungUp(2);
    } finally {
      await port.close();
    }
  });

  test('a refused connection is NoAnswer too', async () => {
    const port = await silentPort();
    const url = port.url;
    await port.close();
    const pb = createPersonaClient({
      baseUrl: url,
      key: KEY,
      fetch: httpTransport({ timeoutMs: 5_000 }),
    });
    const err = await rejectionOf(pb.GET('/api/v1/system/ping'));
    expect(err).toBeInstanceOf(NoAnswer);
    expect(String(err)).toMatch(/ECONNREFUSED/);
  });
});
