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
 * The start row of the request log, in a real express server writing a real log: writing it
 * never holds up the start of the request's work, and it still comes before the end row when
 * the request is answered at once.
 */

let dir: string;
let server: http.Server | null = null;

async function serve(app: express.Express): Promise<string> {
  const s = app.listen(0, '127.0.0.1');
  server = s;
  await new Promise<void>((resolve) => s.once('listening', resolve));
  return `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
}

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-start-row-'));
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
 * A log on a disk that takes its time with start rows: each waits (blocking, as a slow
 * `write(2)` does) until `ready()` says so or `limitMs` has passed, and notes which it was.
 */
class SlowStartLog extends RequestLog {
  readonly waited: Array<'the work had begun' | 'timed out'> = [];

  constructor(
    dataDir: string,
    private readonly ready: () => boolean,
    private readonly limitMs: number,
  ) {
    super(dataDir);
  }

  override start(row: RequestRow): void {
    const until = Date.now() + this.limitMs;
    while (!this.ready() && Date.now() < until) {
      /* the disk is busy */
    }
    this.waited.push(this.ready() ? 'the work had begun' : 'timed out');
    super.start(row);
  }
}

test('a slow request log does not hold up the work: it begins before the start row is written', async () => {
  let begun = false;
  const log = new SlowStartLog(dir, () => begun, 2_000);
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
