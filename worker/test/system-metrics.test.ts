import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { MetricsBody } from '@persona-browser/contracts';
import type { RunningWorker } from '@persona-browser/testkit/worker';
import { KEY, startWorker } from '@persona-browser/testkit/worker';

/**
 * The worker's metrics route relays the waker's `GET /api/metrics`. The waker is another
 * package (the worker never imports it), so a stand-in on loopback plays it here with the
 * waker's own rule: the service key as a bearer token, else 401.
 */
const BODY: MetricsBody = {
  interval_s: 15,
  window_s: 600,
  samples: [
    {
      ts: 1795454427,
      system: {
        cpu_pct: 142.5,
        mem_total_mb: 24105.6,
        mem_used_mb: 583.9,
        load1: 1.5,
        load5: 1.03,
        temp_c: null,
      },
      instances: {
        alice: { pid: 4242, procs: 9, cpu_pct: 12.5, rss_mb: 310.25 },
        bob: null,
      },
    },
  ],
};

interface StandIn {
  url: string;
  /** The key it accepts (changed by a test). */
  key: string;
  seen: Array<string | undefined>;
  close(): Promise<void>;
}

async function standInWaker(key: string): Promise<StandIn> {
  const seen: Array<string | undefined> = [];
  const standIn: StandIn = {
    url: '',
    key,
    seen,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  const server = http.createServer((req, res) => {
    seen.push(req.headers.authorization);
    res.setHeader('Content-Type', 'application/json');
    if (req.url !== '/api/metrics') {
      res.statusCode = 404;
      return res.end('{"detail":"Not found"}');
    }
    if (req.headers.authorization !== `Bearer ${standIn.key}`) {
      res.statusCode = 401;
      return res.end('{"detail":"Invalid API key"}');
    }
    res.end(JSON.stringify({ ...BODY, extra: 'dropped by the relay' }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  standIn.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return standIn;
}

let w: RunningWorker;
let waker: StandIn;

beforeAll(async () => {
  waker = await standInWaker(KEY);
  w = await startWorker({ persona: 'alice', env: { WAKER_URL: waker.url } });
});
afterAll(async () => {
  await w?.stop();
  await waker?.close().catch(() => undefined);
});

test('relays the waker body, sending the service key as the bearer token', async () => {
  const r = await w.call('GET', '/api/v1/system/metrics');
  expect(r.status).toBe(200);
  expect(r.body).toEqual({ success: true, page_id: null, ...BODY });
  expect(waker.seen.at(-1)).toBe(`Bearer ${KEY}`);
});

test('the caller must hold the key too: 401 before the waker is asked', async () => {
  const before = waker.seen.length;
  const r = await w.call('GET', '/api/v1/system/metrics', { auth: false });
  expect(r.status).toBe(401);
  expect(waker.seen.length).toBe(before);
});

test('a waker that refuses the key: 404 saying so, and the key is in no log line', async () => {
  waker.key = 'another-key';
  try {
    const r = await w.call('GET', '/api/v1/system/metrics');
    expect(r.status).toBe(404);
    expect(r.body).toEqual({
      success: false,
      error: expect.stringMatching(/waker.*refused.*SERVICE_KEY.*401/),
      page_id: null,
    });
    expect(waker.seen.at(-1)).toBe(`Bearer ${KEY}`);
    expect(w.logs.join('\n')).not.toContain(KEY);
  } finally {
    waker.key = KEY;
  }
});

test('the waker gone: 404 saying it is not running', async () => {
  await waker.close();
  const r = await w.call('GET', '/api/v1/system/metrics');
  expect(r.status).toBe(404);
  expect(r.body).toEqual({
    success: false,
    error: `Metrics unavailable: the waker is not running at ${waker.url}`,
    page_id: null,
  });
});
