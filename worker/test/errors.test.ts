import http from 'node:http';
import type { Body } from '@persona-browser/testkit/mistakes';
import {
  anyString,
  matching,
  TARGET,
  expectEnvelope,
  useMistakeWorker,
} from '@persona-browser/testkit/mistakes';
import type { ApiResponse, CallOptions } from '@persona-browser/testkit/worker';
import { KEY } from '@persona-browser/testkit/worker';

/**
 * The API's errors (docs/api.md) through the real worker: which client mistakes give which
 * error envelope, without ever taking the worker down.
 */

const { ctx, poolPages, pageIds, createPage, resetPool } = useMistakeWorker();

describe('unknown page id', () => {
  const ghostCalls: Array<[string, string, CallOptions]> = [
    ['POST', 'navigate', { body: { url: 'http://127.0.0.1:9/' } }],
    ['POST', 'extract-content', {}],
    ['GET', 'screenshot', {}],
    ['GET', 'screenshot?full=true', {}],
    ['POST', 'destroy-page', {}],
    ['DELETE', 'destroy-page', {}],
    ['POST', 'lease', {}],
    ['POST', 'lease', { body: { ttl: 30 } }],
    ['DELETE', 'lease', { lease: 'whatever' }],
  ];

  test.each(ghostCalls)(
    '%s %s: 404 {success:false, error:"Page not found", page_id}',
    async (method, action, opts) => {
      const r = await ctx.w.call(method, `/api/v1/ops/ghost/${action}`, opts);
      expect({ status: r.status, body: r.body }).toEqual({
        status: 404,
        body: { success: false, error: 'Page not found', page_id: 'ghost' },
      });
    },
  );

  test('the envelope names the id as sent, decoded from the path', async () => {
    const r = await ctx.w.call(
      'POST',
      `/api/v1/ops/${encodeURIComponent('no such/page é')}/extract-content`,
    );
    expect({ status: r.status, body: r.body }).toEqual({
      status: 404,
      body: { success: false, error: 'Page not found', page_id: 'no such/page é' },
    });
  });

  test('a page id with broken percent-encoding: 400 envelope, not a 500', async () => {
    const r = await ctx.w.call<Body>('POST', '/api/v1/ops/%E0%A4%A/extract-content');
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ success: false, error: anyString });
  });

  test('pages are never created implicitly', async () => {
    await ctx.w.call('POST', '/api/v1/ops/ghost/navigate', { body: { url: `${ctx.fx.url}/` } });
    expect(await pageIds()).toEqual([TARGET]);
    expect(ctx.fx.seen).not.toContain('GET /');
  });
});

describe('malformed and oversized bodies', () => {
  afterEach(resetPool);

  test.each([
    ['a truncated object', '{"page_id": '],
    ['single quotes', "{'page_id': 'x'}"],
    ['a trailing comma', '{"page_id": "x",}'],
    ['a form body', 'page_id=x'],
    ['a bare string', '"x"'],
    ['null', 'null'],
    ['a number', '42'],
  ])('create-page with %s: 400 envelope, no page created', async (_, rawBody) => {
    const r = await ctx.w.call<Body>('POST', '/api/v1/ops/create-page', { rawBody });
    expectEnvelope(r, 400, null);
    expect(await pageIds()).toEqual([TARGET]);
  });

  test('malformed JSON sent without a Content-Type is still a 400 envelope', async () => {
    const res = await fetch(`${ctx.w.url}/api/v1/ops/create-page`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}` },
      body: '{oops',
    });
    expect(res.headers.get('content-type')).toMatch(/json/);
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ success: false, error: anyString, page_id: null });
  });

  test('navigate with malformed JSON: 400 naming JSON, and the page stays where it was', async () => {
    const r = await ctx.w.call<Body>('POST', `/api/v1/ops/${TARGET}/navigate`, {
      rawBody: `{"url": "${ctx.fx.url}/second"`,
    });
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ success: false, error: matching(/json/i) });
    expect(ctx.fx.seen).not.toContain('GET /second');
    const [target] = await poolPages();
    expect(target?.url).toBe('about:blank');
  });

  test.each([
    ['create-page', '[]'],
    ['create-page', '[{"page_id":"arr"}]'],
    [`${TARGET}/navigate`, '[{"url":"http://127.0.0.1:9/"}]'],
    [`${TARGET}/lease`, '[{"ttl":30}]'],
    [`${TARGET}/extract-content`, '[]'],
    [`${TARGET}/destroy-page`, '["please"]'],
  ])('POST %s with the JSON array %s: 400 envelope', async (route, rawBody) => {
    const r = await ctx.w.call<Body>('POST', `/api/v1/ops/${route}`, { rawBody });
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ success: false, error: matching(/object/) });
    expect(await pageIds()).toEqual([TARGET]);
    const [target] = await poolPages();
    expect(target?.leased).toBe(false);
  });

  test('a body over 1 MB: 413 envelope; just under 1 MB is accepted', async () => {
    // JSON whitespace makes the body big without a field the route does not take.
    const pad = (n: number): string => `{"page_id": "big"${' '.repeat(n)}}`;
    const over = await ctx.w.call<Body>('POST', '/api/v1/ops/create-page', {
      rawBody: pad(1024 * 1024 + 10),
    });
    expectEnvelope(over, 413, null);
    expect(await pageIds()).toEqual([TARGET]);

    const under = await ctx.w.call<Body>('POST', '/api/v1/ops/create-page', {
      rawBody: pad(1024 * 1024 - 100),
    });
    expect(under.status).toBe(200);
    expect(under.body).toMatchObject({ success: true, page_id: 'big' });
  });

  test('a body over 1 MB on a page route: 413, and the page is not navigated', async () => {
    const r = await ctx.w.call<Body>('POST', `/api/v1/ops/${TARGET}/navigate`, {
      body: { url: `${ctx.fx.url}/second`, pad: 'x'.repeat(2 * 1024 * 1024) },
    });
    expect(r.status).toBe(413);
    expect(r.body).toMatchObject({ success: false, error: anyString });
    expect(ctx.fx.seen).not.toContain('GET /second');
  });
});

/**
 * A POST as a client frames it on the wire: no body and no length (curl -X POST), a length of
 * zero, or a body sent in chunks without a length.
 */
function framedPost(
  route: string,
  framing: 'none' | 'empty' | 'chunked',
  chunks: string[] = [],
): Promise<{ status: number; body: Body }> {
  const headers: Record<string, string> = { authorization: `Bearer ${KEY}` };
  if (framing === 'empty') headers['content-length'] = '0';
  if (framing === 'chunked') headers['transfer-encoding'] = 'chunked';
  return new Promise((resolve, reject) => {
    const req = http.request(`${ctx.w.url}${route}`, { method: 'POST', headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as Body }));
    });
    req.on('error', reject);
    req.setTimeout(10_000, () => req.destroy(new Error('no answer')));
    // Without a length, node frames the request in chunks unless told otherwise.
    if (framing === 'none') req.useChunkedEncodingByDefault = false;
    for (const chunk of chunks) req.write(chunk);
    req.end();
  });
}

describe('how a body is framed', () => {
  afterEach(resetPool);

  test.each(['none', 'empty'] as const)(
    'no body (%s): a route that needs a field names it; one that needs none answers',
    async (framing) => {
      const missing = await framedPost(`/api/v1/ops/${TARGET}/navigate`, framing);
      expect(missing.status).toBe(400);
      expect(missing.body).toMatchObject({ success: false, error: matching(/url/) });
      const created = await framedPost('/api/v1/ops/create-page', framing);
      expect(created.status).toBe(200);
      expect(created.body).toMatchObject({ success: true, page_id: anyString });
    },
  );

  test('a body in chunks without a length is read whole', async () => {
    const r = await framedPost('/api/v1/ops/create-page', 'chunked', ['{"page_', 'id":"chunked"}']);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ success: true, page_id: 'chunked' });
  });
});

describe('parameter validation', () => {
  afterEach(resetPool);

  test.each([
    ['navigate', { url: 5 }, 'url'],
    ['navigate', {}, 'url'],
    ['navigate', { url: null }, 'url'],
    ['navigate', { url: ['http://127.0.0.1:9/'] }, 'url'],
    ['navigate', { url: 'not a url' }, 'url'],
    ['lease', { ttl: 'abc' }, 'ttl'],
    ['lease', { ttl: 0 }, 'ttl'],
    ['lease', { ttl: -5 }, 'ttl'],
    ['lease', { ttl: 3601 }, 'ttl'],
    ['lease', { ttl: { s: 30 } }, 'ttl'],
  ])('%s with %j: 400 naming %s, page untouched', async (action, body, field) => {
    const r = await ctx.w.call<Body>('POST', `/api/v1/ops/${TARGET}/${action}`, { body });
    expectEnvelope(r, 400, TARGET);
    expect(r.body.error).toMatch(new RegExp(`\\b${field}\\b`));
    const [target] = await poolPages();
    expect(target).toMatchObject({ url: 'about:blank', leased: false });
  });

  test.each([[{ page_id: 7 }], [{ page_id: true }], [{ page_id: '' }], [{ page_id: ['a'] }]])(
    'create-page with %j: 400 naming page_id, no page created',
    async (body) => {
      const r = await ctx.w.call<Body>('POST', '/api/v1/ops/create-page', { body });
      expect(r.status).toBe(400);
      expect(r.body).toMatchObject({ success: false, error: matching(/page_id/) });
      expect(await pageIds()).toEqual([TARGET]);
    },
  );

  test('screenshot with full=maybe: 400 naming full', async () => {
    const r = await ctx.w.call<Body>('GET', `/api/v1/ops/${TARGET}/screenshot?full=maybe`);
    expectEnvelope(r, 400, TARGET);
    expect(r.body.error).toMatch(/\bfull\b/);
  });

  test('ttl at the upper bound 3600 is accepted (0 < ttl <= 3600)', async () => {
    const r = await ctx.w.call<Body>('POST', `/api/v1/ops/${TARGET}/lease`, {
      body: { ttl: 3600 },
    });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ success: true, ttl: 3600, lease_token: anyString });
    const release = await ctx.w.call('DELETE', `/api/v1/ops/${TARGET}/lease`, {
      lease: r.body.lease_token as string,
    });
    expect(release.status).toBe(200);
  });
});

describe('unknown routes under /api', () => {
  test.each([
    ['GET', '/api/v1/nope'],
    ['POST', '/api/v1/ops/nope'],
    ['POST', `/api/v1/ops/${TARGET}/teleport`],
    ['GET', '/api/v2/system/status'],
    ['GET', '/api'],
  ])('%s %s: 404 envelope naming the route as sent', async (method, route) => {
    const r = await ctx.w.call<Body>(`${method}`, `${route}?with=query`);
    expectEnvelope(r, 404, null);
    expect(r.body.error).toBe(`No route ${method} ${route}`);
  });
});

describe('pool rules', () => {
  afterAll(resetPool);

  test('create-page with an id in use: 400 envelope, the first page keeps its state', async () => {
    await createPage('dup');
    const nav = await ctx.w.call<Body>('POST', '/api/v1/ops/dup/navigate', {
      body: { url: `${ctx.fx.url}/second` },
    });
    expect(nav.body).toMatchObject({ success: true });
    const r = await ctx.w.call<Body>('POST', '/api/v1/ops/create-page', {
      body: { page_id: 'dup' },
    });
    expectEnvelope(r, 400, 'dup');
    expect(await pageIds()).toEqual(['dup', TARGET].sort());
    const dup = (await poolPages()).find((p) => p.page_id === 'dup');
    expect(dup?.url).toBe(`${ctx.fx.url}/second`);
  });

  test('a sixth page: 400 envelope, the pool stays at 5; a freed slot can be reused', async () => {
    await resetPool();
    for (const id of ['cap-1', 'cap-2', 'cap-3', 'cap-4']) await createPage(id);
    expect(await pageIds()).toHaveLength(5);
    const sixth = await ctx.w.call<Body>('POST', '/api/v1/ops/create-page', {
      body: { page_id: 'cap-6' },
    });
    expectEnvelope(sixth, 400, 'cap-6');
    const generated = await ctx.w.call<Body>('POST', '/api/v1/ops/create-page');
    expect(generated.status).toBe(400);
    expect(await pageIds()).toEqual(['cap-1', 'cap-2', 'cap-3', 'cap-4', TARGET].sort());
    const status = await ctx.w.call<Body>('GET', '/api/v1/system/status', { auth: false });
    expect(status.body).toMatchObject({ page_count: 5, max_pages: 5 });

    const destroyed = await ctx.w.call<Body>('POST', '/api/v1/ops/cap-4/destroy-page');
    expect(destroyed.body).toMatchObject({ success: true, total_pages: 4 });
    const again = await ctx.w.call<Body>('POST', '/api/v1/ops/create-page', {
      body: { page_id: 'cap-6' },
    });
    expect(again.body).toMatchObject({ success: true, page_id: 'cap-6', total_pages: 5 });
  });
});

describe('empty bodies on endpoints without (required) parameters', () => {
  afterAll(resetPool);

  /** A raw request: no body and no Content-Type at all, as `curl -X POST` sends it. */
  async function bare(method: string, route: string, lease?: string): Promise<ApiResponse<Body>> {
    const headers: Record<string, string> = { authorization: `Bearer ${KEY}` };
    if (lease) headers['x-lease'] = lease;
    const started = performance.now();
    const res = await fetch(ctx.w.url + route, { method, headers });
    expect(res.headers.get('content-type') ?? '').toMatch(/json/);
    return {
      status: res.status,
      body: (await res.json()) as Body,
      headers: res.headers,
      ms: performance.now() - started,
    };
  }

  test('create-page with no body generates an id that is then in the pool', async () => {
    const r = await bare('POST', '/api/v1/ops/create-page');
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ success: true, url: 'about:blank', state: 'idle' });
    expect(typeof r.body.page_id).toBe('string');
    expect(await pageIds()).toContain(r.body.page_id);
  });

  test('extract-content with no body and no Content-Type', async () => {
    const r = await bare('POST', `/api/v1/ops/${TARGET}/extract-content`);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ success: true, page_id: TARGET, url: 'about:blank' });
    expect(r.body.content_length).toBe((r.body.content as string).length);
  });

  test('extract-content with an empty body declared as JSON', async () => {
    const r = await ctx.w.call<Body>('POST', `/api/v1/ops/${TARGET}/extract-content`, {
      rawBody: '',
    });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ success: true, page_id: TARGET });
  });

  test('lease with no body takes the default ttl; release and destroy need no body', async () => {
    await createPage('empty-body');
    const lease = await bare('POST', '/api/v1/ops/empty-body/lease');
    expect(lease.status).toBe(200);
    expect(lease.body).toMatchObject({ success: true, ttl: 300 });
    const token = lease.body.lease_token as string;
    const release = await bare('DELETE', '/api/v1/ops/empty-body/lease', token);
    expect(release.status).toBe(200);
    expect(release.body).toMatchObject({ success: true, page_id: 'empty-body' });
    const destroy = await bare('POST', '/api/v1/ops/empty-body/destroy-page');
    expect(destroy.status).toBe(200);
    expect(destroy.body).toMatchObject({ success: true, page_id: 'empty-body' });
    expect(await pageIds()).not.toContain('empty-body');
  });
});
