import fs from 'node:fs';
import path from 'node:path';
import type { Fixture } from '@persona-browser/testkit/fixture';
import { startFixture } from '@persona-browser/testkit/fixture';
import type { LogRow } from '@persona-browser/testkit/request-log-file';
import { LOG_HEADER, readLogRows } from '@persona-browser/testkit/request-log-file';
import type { ApiResponse, CallOptions, RunningWorker } from '@persona-browser/testkit/worker';
import { KEY, sleep, startWorker } from '@persona-browser/testkit/worker';

/**
 * The request log (docs/api.md), read back from the CSV files the worker writes in its persona
 * folder: which requests get rows, what the rows say, and what happens when clients or the
 * worker go away mid-request.
 */

let w: RunningWorker;
let fx: Fixture;

type Body = Record<string, unknown>;
/** Jest's asymmetric matcher, typed so that lint sees no `any`. */
const anyString: unknown = expect.any(String);

const ISO_MS_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const utcDay = (ms = Date.now()): string => new Date(ms).toISOString().slice(0, 10);

const rows = (): LogRow[] => readLogRows(w.dataDir);

async function waitFor<T>(probe: () => T | undefined, timeoutMs: number, what: string): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

interface Logged {
  res: ApiResponse<Body>;
  start: LogRow;
  end: LogRow;
}

/** Makes one call and returns its response with the start and end rows it left. */
async function logged(method: string, route: string, opts?: CallOptions): Promise<Logged> {
  const before = rows().length;
  const res = await w.call<Body>(method, route, opts);
  const fresh = (): LogRow[] => rows().slice(before);
  const starts = fresh().filter((r) => r.event === 'start');
  expect(starts.map((r) => `${r.method} ${r.path}`)).toEqual([
    `${method} ${route.split('?')[0] as string}`,
  ]);
  const start = starts[0] as LogRow;
  const end = await waitFor(
    () => fresh().find((r) => r.event === 'end' && r.id === start.id),
    5_000,
    `the end row of ${method} ${route}`,
  );
  return { res, start, end };
}

/**
 * Creates a page and waits for its end row: the row is written just after the reply goes out,
 * so a test that counts rows from here on does not catch it late.
 */
async function createPage(id: string): Promise<void> {
  const { res } = await logged('POST', '/api/v1/ops/create-page', { body: { page_id: id } });
  expect(res.status).toBe(200);
}

/** Destroys every page, so each group of tests has the whole pool (cap 5). */
async function destroyAll(): Promise<void> {
  const r = await w.call<{ pages: Array<{ page_id: string }> }>(
    'GET',
    '/api/v1/system/status/pages',
    { auth: false },
  );
  for (const { page_id } of r.body.pages) {
    await w.call('DELETE', `/api/v1/ops/${encodeURIComponent(page_id)}/destroy-page`);
  }
}

beforeAll(async () => {
  fx = await startFixture();
  w = await startWorker({ persona: 'logbook' });
  await w.waitInitialized();
});

afterAll(async () => {
  await w?.stop();
  await fx?.close();
});

describe('files', () => {
  afterAll(destroyAll);

  test('rows go to requests/<UTC day>.csv, which starts with the documented header once', async () => {
    const dayBefore = utcDay();
    await logged('POST', '/api/v1/ops/create-page', { body: { page_id: 'files' } });
    const dayAfter = utcDay();
    const folder = path.join(w.dataDir, 'requests');
    const files = fs.readdirSync(folder);
    expect(files.some((f) => f === `${dayBefore}.csv` || f === `${dayAfter}.csv`)).toBe(true);
    for (const f of files) {
      expect(f).toMatch(/^\d{4}-\d{2}-\d{2}\.csv$/);
      const lines = fs.readFileSync(path.join(folder, f), 'utf8').split('\n');
      expect(lines[0]).toBe(LOG_HEADER);
      expect(lines.filter((l) => l === LOG_HEADER)).toHaveLength(1);
      expect(lines.at(-1)).toBe(''); // every row is complete, newline included
    }
    const created = rows().filter((r) => r.path === '/api/v1/ops/create-page');
    expect(created.map((r) => r.event)).toEqual(['start', 'end']);
    expect([`${dayBefore}.csv`, `${dayAfter}.csv`]).toContain(created[0]?.file);
  });
});

describe('start and end rows', () => {
  afterAll(destroyAll);

  test('every call outside /system/ writes a start and an end row joined by an 8-hex id', async () => {
    const p = '/api/v1/ops/pair';
    const calls: Array<[string, string, CallOptions?]> = [
      ['POST', '/api/v1/ops/create-page', { body: { page_id: 'pair' } }],
      ['POST', `${p}/extract-content`],
      ['GET', `${p}/screenshot`],
      ['POST', `${p}/lease`, { body: { ttl: 60 } }],
      ['POST', '/api/v1/ops/ghost/extract-content'],
      ['POST', `${p}/extract-content`, { auth: false }],
      ['GET', '/api/v1/nope'],
      ['GET', '/api/v1/plugins'],
      ['GET', '/api/v1/media/0123456789abcdef'],
    ];
    const seen: Logged[] = [];
    for (const [method, route, opts] of calls) seen.push(await logged(method, route, opts));
    const token = seen[3]?.res.body.lease_token as string;
    seen.push(await logged('DELETE', `${p}/lease`, { lease: token }));
    seen.push(await logged('DELETE', `${p}/destroy-page`));

    for (const { start, end } of seen) {
      expect(start.id).toMatch(/^[0-9a-f]{8}$/);
      expect(end.id).toBe(start.id);
      const joined = (r: LogRow): string[] => [r.id, r.method, r.kind, r.name, r.path];
      expect(joined(end)).toEqual(joined(start));
      expect([start.event, end.event]).toEqual(['start', 'end']);
      expect({ status: start.status, ms: start.ms }).toEqual({ status: '', ms: '' });
      expect(end.status).not.toBe('');
      // Exactly two rows carry this id.
      expect(rows().filter((r) => r.id === start.id)).toHaveLength(2);
    }
    expect(new Set(seen.map((s) => s.start.id)).size).toBe(seen.length);
  });

  test('system calls and non-API paths write no rows', async () => {
    await createPage('sentinel');
    const before = rows().length;
    const quiet: Array<[string, string, CallOptions?]> = [
      ['GET', '/api/v1/system/status', { auth: false }],
      ['GET', '/api/v1/system/status/pages', { auth: false }],
      ['GET', '/api/v1/system/ping', { auth: false }],
      ['GET', '/api/v1/system/metrics'],
      ['GET', '/api/v1/system/start', { auth: false }],
      ['GET', '/api/v1/system/stop', { auth: false }],
      ['GET', '/api/v1/system/kill', { auth: false }],
      ['GET', '/api/v1/system/update', { auth: false }],
      ['GET', '/api/v1/system/nope'],
      ['GET', '/docs'],
      ['GET', '/'],
      ['GET', '/api/v2/ops/x'],
    ];
    const statuses: number[] = [];
    for (const [method, route, opts] of quiet) {
      statuses.push((await w.call(method, route, opts)).status);
    }
    expect(statuses.slice(0, 8)).toEqual([200, 200, 200, 404, 401, 401, 401, 401]);
    // A sentinel call afterwards shows the log is being written, and that it is the only entry.
    await logged('POST', '/api/v1/ops/sentinel/extract-content');
    expect(
      rows()
        .slice(before)
        .map((r) => `${r.event} ${r.method} ${r.path}`),
    ).toEqual([
      'start POST /api/v1/ops/sentinel/extract-content',
      'end POST /api/v1/ops/sentinel/extract-content',
    ]);
  });
});

describe('kind and name', () => {
  afterAll(destroyAll);

  beforeAll(() => createPage('kn'));

  const none = (): CallOptions => ({});
  test.each([
    [
      'POST',
      '/api/v1/ops/create-page',
      'ops',
      'create-page',
      () => ({ body: { page_id: 'kn-2' } }),
    ],
    ['POST', '/api/v1/ops/kn/navigate', 'ops', 'navigate', () => ({ body: { url: `${fx.url}/` } })],
    ['POST', '/api/v1/ops/kn/extract-content', 'ops', 'extract-content', none],
    ['GET', '/api/v1/ops/kn/screenshot', 'ops', 'screenshot', none],
    ['POST', '/api/v1/ops/kn-2/destroy-page', 'ops', 'destroy-page', none],
    ['POST', '/api/v1/primitive/kn/click-element', 'primitive', 'click-element', none],
    ['POST', '/api/v1/kn/plugin/archive/check', 'plugin', 'archive/check', none],
    ['GET', '/api/v1/plugins', 'plugins', '', none],
    ['GET', '/api/v1/plugins/archive_check/docs', 'plugins', '', none],
    ['GET', '/api/v1/media/abcdef0123456789', 'media', '', none],
  ])('%s %s: kind %s, name %p', async (method, route, kind, name, opts) => {
    const { res, start, end } = await logged(method, route, opts());
    expect({ kind: start.kind, name: start.name, path: start.path, method: start.method }).toEqual({
      kind,
      name,
      path: route,
      method,
    });
    expect({ kind: end.kind, name: end.name }).toEqual({ kind, name });
    expect(end.status).toBe(String(res.status));
  });
});

describe('columns', () => {
  afterAll(destroyAll);

  test('path is logged without the query string', async () => {
    await createPage('query');
    const { res, start, end } = await logged('GET', '/api/v1/ops/query/screenshot?full=true');
    expect(res.status).toBe(200);
    expect(typeof res.body.full_screenshot).toBe('string'); // the query did reach the route
    expect(start.path).toBe('/api/v1/ops/query/screenshot');
    expect(end.path).toBe('/api/v1/ops/query/screenshot');
    expect(rows().filter((r) => r.path.includes('?'))).toEqual([]);
  });

  test('the end row carries the status that was sent', async () => {
    await createPage('st');
    const leased = await w.call<Body>('POST', '/api/v1/ops/st/lease', { body: { ttl: 60 } });
    const token = leased.body.lease_token as string;
    const attempts: Array<[string, string, CallOptions?]> = [
      ['POST', '/api/v1/ops/st/extract-content', { lease: token }],
      ['POST', '/api/v1/ops/create-page', { body: { page_id: 'st' } }],
      ['POST', '/api/v1/ops/create-page', { rawBody: '{"page_id":' }],
      ['POST', '/api/v1/ops/st/lease', { body: { ttl: 0 }, lease: token }],
      ['POST', '/api/v1/ops/st/extract-content', { auth: false }],
      ['POST', '/api/v1/ops/nobody/extract-content'],
      ['DELETE', '/api/v1/ops/st/teleport'],
      ['POST', '/api/v1/ops/create-page', { body: { pad: 'x'.repeat(1_100_000) } }],
      ['POST', '/api/v1/ops/st/extract-content'],
    ];
    const results: Array<{ sent: number; logged: string }> = [];
    for (const [method, route, opts] of attempts) {
      const { res, end } = await logged(method, route, opts);
      results.push({ sent: res.status, logged: end.status });
    }
    const expected = [200, 400, 400, 400, 401, 404, 404, 413, 423];
    expect(results).toEqual(expected.map((s) => ({ sent: s, logged: String(s) })));
  });

  test('time is ISO 8601 UTC with milliseconds; ms is the integer duration', async () => {
    await createPage('timing');
    const before = Date.now();
    const { res, start, end } = await logged('POST', '/api/v1/ops/timing/navigate', {
      body: { url: `${fx.url}/second` },
    });
    const after = Date.now();
    expect(res.body.success).toBe(true);
    for (const r of [start, end]) {
      expect(r.time).toMatch(ISO_MS_UTC);
      expect(new Date(r.time).toISOString()).toBe(r.time);
    }
    const startMs = Date.parse(start.time);
    const endMs = Date.parse(end.time);
    expect(startMs).toBeGreaterThanOrEqual(before - 1);
    expect(endMs).toBeLessThanOrEqual(after + 1);
    expect(end.ms).toMatch(/^\d+$/);
    const ms = Number(end.ms);
    // Navigate pauses about 2 s first: the duration shows it, and matches the two timestamps.
    expect(ms).toBeGreaterThanOrEqual(1_500);
    expect(Math.abs(endMs - startMs - ms)).toBeLessThanOrEqual(50);
    expect(ms).toBeLessThanOrEqual(after - before + 1);

    for (const r of rows()) {
      expect(r.time).toMatch(ISO_MS_UTC);
      expect(['start', 'end']).toContain(r.event);
      expect(r.ms).toMatch(r.event === 'end' ? /^\d+$/ : /^$/);
    }
  });

  test('a 200 with success false is logged as 200', async () => {
    await createPage('refused');
    const { res, end } = await logged('POST', '/api/v1/ops/refused/navigate', {
      body: { url: 'http://127.0.0.1:1/' },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ success: false, error: anyString });
    expect(end.status).toBe('200');
  });
});

describe('robustness', () => {
  afterAll(destroyAll);

  test('a mixed-case API path reaches its route and is logged like it', async () => {
    await createPage('cased');
    const { res, start, end } = await logged('POST', '/API/V1/OPS/cased/Extract-Content');
    expect(res.body).toMatchObject({ success: true, page_id: 'cased' });
    expect(start).toMatchObject({ kind: 'ops', name: 'extract-content' });
    expect(start.path).toBe('/API/V1/OPS/cased/Extract-Content');
    expect(end.status).toBe('200');

    const before = rows().length;
    const status = await w.call('GET', '/api/v1/System/status', { auth: false });
    expect(status.status).toBe(200);
    await logged('POST', '/api/v1/ops/cased/extract-content');
    expect(
      rows()
        .slice(before)
        .map((r) => r.path),
    ).toEqual(['/api/v1/ops/cased/extract-content', '/api/v1/ops/cased/extract-content']);
  });

  test('a requests folder deleted while the worker runs comes back, header first', async () => {
    await createPage('cleanup');
    fs.rmSync(path.join(w.dataDir, 'requests'), { recursive: true });
    const { res, start, end } = await logged('POST', '/api/v1/ops/cleanup/extract-content');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ success: true });
    expect(end.id).toBe(start.id);
    const [file] = fs.readdirSync(path.join(w.dataDir, 'requests'));
    const text = fs.readFileSync(path.join(w.dataDir, 'requests', file as string), 'utf8');
    expect(text.split('\n')[0]).toBe(LOG_HEADER);
  });

  test('a log that cannot be written never fails the request', async () => {
    await createPage('unwritable');
    const folder = path.join(w.dataDir, 'requests');
    fs.rmSync(folder, { recursive: true });
    fs.writeFileSync(folder, 'not a folder'); // every open under it now fails
    try {
      const r = await w.call<Body>('POST', '/api/v1/ops/unwritable/extract-content');
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({ success: true, page_id: 'unwritable' });
      const created = await w.call<Body>('POST', '/api/v1/ops/create-page');
      expect(created.status).toBe(200);
    } finally {
      fs.rmSync(folder, { force: true });
    }
    const { end } = await logged('POST', '/api/v1/ops/unwritable/extract-content');
    expect(end.status).toBe('200');
  });
});

describe('a client that hangs up', () => {
  afterAll(destroyAll);

  test('does not stop the work, and the end row still carries the status sent', async () => {
    await createPage('hang-up');
    const route = '/api/v1/ops/hang-up/navigate';
    const target = `${fx.url}/slow?ms=4000`;
    const before = rows().length;
    const ctl = new AbortController();
    const request = fetch(w.url + route, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url: target }),
      signal: ctl.signal,
    });
    const aborter = setTimeout(() => ctl.abort(), 300);
    await expect(request).rejects.toThrow();
    clearTimeout(aborter);

    const fresh = (): LogRow[] => rows().slice(before);
    const start = fresh().find((r) => r.event === 'start' && r.path === route);
    expect(start).toBeDefined();
    const id = (start as LogRow).id;
    // The client is gone; the navigation (about 2 s pause, then a 4 s page) is not finished.
    expect(fresh().find((r) => r.event === 'end' && r.id === id)).toBeUndefined();
    expect(fx.seen).not.toContain('GET /slow');

    const end = await waitFor(
      () => fresh().find((r) => r.event === 'end' && r.id === id),
      30_000,
      'the end row of the abandoned navigation',
    );
    expect(end.status).toBe('200');
    expect(Number(end.ms)).toBeGreaterThanOrEqual(4_000);
    expect(fx.seen).toContain('GET /slow');

    const pages = await w.call<{ pages: Array<{ page_id: string; url: string }> }>(
      'GET',
      '/api/v1/system/status/pages',
      { auth: false },
    );
    expect(pages.body.pages.find((p) => p.page_id === 'hang-up')?.url).toBe(target);
    const content = await w.call<Body>('POST', '/api/v1/ops/hang-up/extract-content');
    expect(content.body).toMatchObject({ success: true, url: target, title: 'Slow page' });
  });
});

describe('a worker that stops mid-request', () => {
  test('writes the end row with an empty status', async () => {
    await createPage('dying');
    const route = '/api/v1/ops/dying/navigate';
    const before = rows().length;
    const pending = w
      .call('POST', route, { body: { url: `${fx.url}/hang` } })
      .then((r) => r.status)
      .catch(() => 'connection lost');
    const start = await waitFor(
      () =>
        rows()
          .slice(before)
          .find((r) => r.event === 'start' && r.path === route),
      5_000,
      'the start row of the navigation',
    );
    await waitFor(() => (fx.seen.includes('GET /hang') ? true : undefined), 10_000, 'GET /hang');
    await w.stop();
    expect(await w.exited).toBe(0);
    await pending;

    const ended = rows().filter((r) => r.id === start.id && r.event === 'end');
    expect(ended).toHaveLength(1);
    expect(ended[0]?.status).toBe('');
    expect(ended[0]?.ms).toMatch(/^\d+$/);
    expect(ended[0]?.path).toBe(route);
  });
});
