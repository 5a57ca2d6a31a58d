import { spawn } from 'node:child_process';
import fs from 'node:fs';
import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import express from 'express';
import { RequestTracker } from '../src/http/request-tracker';
import type { RequestRow } from '../src/log/request-log';
import { RequestLog } from '../src/log/request-log';
import { readLogRows } from '@persona-browser/testkit/request-log-file';

/**
 * The request tracker in a real express server on loopback, writing a real request log: when
 * the start row is written relative to the work and the end row relative to the reply, and what
 * concurrent requests leave in the file.
 */

let dir: string;
let server: http.Server | null = null;

/** Serves `app` on a free loopback port and returns its base URL. */
async function serve(app: express.Express): Promise<string> {
  const s = app.listen(0, '127.0.0.1');
  server = s;
  await new Promise<void>((resolve) => s.once('listening', resolve));
  return `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
}

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-tracker-'));
});
afterEach(async () => {
  const s = server;
  server = null;
  if (s) {
    s.closeAllConnections();
    await new Promise((resolve) => s.close(resolve));
  }
  fs.rmSync(dir, { recursive: true, force: true });
});

/**
 * A log on a disk that takes its time with one kind of row (`slow`): each such row waits
 * (blocking, as a slow `write(2)` does) until `ready()` says so or `limitMs` has passed, and
 * notes which it was: `ready` names the moment it waited for.
 */
class SlowLog extends RequestLog {
  readonly waited: string[] = [];

  constructor(
    dataDir: string,
    private readonly slow: 'start' | 'end',
    private readonly ready: { name: string; now: () => boolean },
    private readonly limitMs: number,
  ) {
    super(dataDir);
  }

  private stall(kind: 'start' | 'end'): void {
    if (kind !== this.slow) return;
    const until = Date.now() + this.limitMs;
    while (!this.ready.now() && Date.now() < until) {
      /* the disk is busy */
    }
    this.waited.push(this.ready.now() ? this.ready.name : 'timed out');
  }

  override start(row: RequestRow): void {
    this.stall('start');
    super.start(row);
  }

  override end(row: RequestRow, status: number | null, ms: number): void {
    this.stall('end');
    super.end(row, status, ms);
  }
}

test('a slow request log does not hold back the reply: the client has it before the end row', async () => {
  const marker = path.join(dir, 'client-done');
  const body = path.join(dir, 'body.json');
  const log = new SlowLog(
    dir,
    'end',
    { name: 'client had its reply', now: () => fs.existsSync(marker) },
    4_000,
  );
  const tracker = new RequestTracker(log);
  const app = express();
  app.use(tracker.middleware());
  app.post('/api/v1/ops/slow/extract-content', (_req, res) => {
    res.json({ success: true, page_id: 'slow', content: 'x'.repeat(2_000) });
  });
  const base = await serve(app);

  // The client is another process, so it reads its reply while this one is busy writing the row.
  const client = spawn('sh', [
    '-c',
    'curl -sS -X POST -o "$1" "$2" && touch "$3"',
    'client',
    body,
    `${base}/api/v1/ops/slow/extract-content`,
    marker,
  ]);
  const exitCode = await new Promise<number | null>((resolve) => client.once('exit', resolve));

  expect(exitCode).toBe(0);
  expect(JSON.parse(fs.readFileSync(body, 'utf8'))).toMatchObject({ success: true });
  expect(log.waited).toEqual(['client had its reply']);
  const rows = readLogRows(dir).map((r) => [r.event, r.path, r.status]);
  expect(rows).toEqual([
    ['start', '/api/v1/ops/slow/extract-content', ''],
    ['end', '/api/v1/ops/slow/extract-content', '200'],
  ]);
});

test('concurrent requests each leave a complete start and end row, in the order they happened', async () => {
  const tracker = new RequestTracker(new RequestLog(dir));
  const app = express();
  app.use(tracker.middleware());
  // Each request answers after its own delay, so ends arrive in another order than starts.
  app.get('/api/v1/ops/:page/screenshot', (req, res) => {
    const delay = Number(req.query.ms);
    setTimeout(() => res.status(delay % 2 ? 404 : 200).json({ page_id: req.params.page }), delay);
  });
  const base = await serve(app);

  const delays = Array.from({ length: 24 }, (_, i) => (i * 7) % 40);
  const statuses = await Promise.all(
    delays.map(
      async (ms, i) => (await fetch(`${base}/api/v1/ops/p${i}/screenshot?ms=${ms}`)).status,
    ),
  );

  const rows = readLogRows(dir);
  expect(rows).toHaveLength(2 * delays.length);
  // Every path has one start and then one end, joined by the id, with the status sent.
  delays.forEach((ms, i) => {
    const own = rows.filter((r) => r.path === `/api/v1/ops/p${i}/screenshot`);
    expect(own.map((r) => r.event)).toEqual(['start', 'end']);
    expect(own[1]?.id).toBe(own[0]?.id);
    expect(own[1]?.status).toBe(String(statuses[i]));
    expect(statuses[i]).toBe(ms % 2 ? 404 : 200);
  });
  // Rows are in the order they were written: their times never go back.
  const times = rows.map((r) => Date.parse(r.time));
  expect(times).toEqual([...times].sort((a, b) => a - b));
  // Ends came back in another order than the starts went out.
  const order = (event: string): string[] =>
    rows.filter((r) => r.event === event).map((r) => r.path);
  expect(order('end')).not.toEqual(order('start'));
});

test('a slow request log does not hold up the work: it begins before the start row is written', async () => {
  let begun = false;
  const log = new SlowLog(dir, 'start', { name: 'the work had begun', now: () => begun }, 2_000);
  const app = express();
  app.use(new RequestTracker(log).middleware());
  app.post('/api/v1/ops/slow/extract-content', (_req, res) => {
    // What a handler does first: hand the browser its work, then wait for the answer.
    begun = true;
    setTimeout(() => res.json({ success: true, page_id: 'slow' }), 20);
  });
  const base = await serve(app);

  const res = await fetch(`${base}/api/v1/ops/slow/extract-content`, { method: 'POST' });

  expect(res.status).toBe(200);
  expect(log.waited).toEqual(['the work had begun']);
  const rows = readLogRows(dir).map((r) => [r.event, r.path, r.status]);
  expect(rows).toEqual([
    ['start', '/api/v1/ops/slow/extract-content', ''],
    ['end', '/api/v1/ops/slow/extract-content', '200'],
  ]);
});

test('a request answered at once still writes its start row before its end row', async () => {
  const app = express();
  app.use(new RequestTracker(new RequestLog(dir)).middleware());
  app.get('/api/v1/ops/:page/screenshot', (req, res) => {
    res.status(404).json({ success: false, error: 'no page', page_id: req.params.page });
  });
  const base = await serve(app);

  const statuses = await Promise.all(
    ['a', 'b', 'c'].map(async (p) => (await fetch(`${base}/api/v1/ops/${p}/screenshot`)).status),
  );

  expect(statuses).toEqual([404, 404, 404]);
  const rows = readLogRows(dir);
  for (const p of ['a', 'b', 'c']) {
    const own = rows.filter((r) => r.path === `/api/v1/ops/${p}/screenshot`);
    expect(own.map((r) => [r.event, r.status])).toEqual([
      ['start', ''],
      ['end', '404'],
    ]);
    expect(own[1]?.id).toBe(own[0]?.id);
  }
});
