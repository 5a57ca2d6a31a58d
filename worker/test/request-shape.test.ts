import type { Body } from '@persona-browser/testkit/mistakes';
import { TARGET, expectEnvelope, useMistakeWorker } from '@persona-browser/testkit/mistakes';

/**
 * What a client that gets the shape of a call wrong is told: a known path with the wrong
 * method is a 405 naming the methods it takes (not an unknown route), and a field the route
 * does not take is refused by name rather than dropped.
 */

const { ctx, pageIds, resetPool } = useMistakeWorker();

describe('a known path called with the wrong method', () => {
  test.each([
    ['PUT', '/api/v1/ops/create-page', 'POST'],
    ['GET', '/api/v1/ops/create-page', 'POST'],
    ['GET', `/api/v1/ops/${TARGET}/navigate`, 'POST'],
    ['PATCH', `/api/v1/ops/${TARGET}/lease`, 'POST, DELETE'],
    ['POST', `/api/v1/ops/${TARGET}/screenshot`, 'GET, HEAD'],
    ['POST', '/api/v1/system/ping', 'GET, HEAD'],
    ['DELETE', `/api/v1/primitive/${TARGET}/click-element`, 'POST'],
    ['GET', `/api/v1/${TARGET}/plugin/archive/check`, 'POST'],
    ['POST', '/api/v1/plugins', 'GET, HEAD'],
  ])('%s %s: 405, Allow %s, the envelope naming them', async (method, route, allow) => {
    const r = await ctx.w.call<Body>(method, route, { body: method === 'GET' ? undefined : {} });
    expectEnvelope(r, 405, null);
    expect(r.headers.get('allow')).toBe(allow);
    expect(r.body.error).toBe(
      `Method ${method} not allowed on ${route} (allowed: ${allow.replace(', HEAD', '')})`,
    );
  });

  test('OPTIONS answers the methods a path takes, without a body', async () => {
    const r = await ctx.w.call('OPTIONS', `/api/v1/ops/${TARGET}/lease`);
    expect(r.status).toBe(204);
    expect(r.headers.get('allow')).toBe('POST, DELETE');
  });

  test('the wrong method does nothing: no page is created by GET create-page', async () => {
    await ctx.w.call('GET', '/api/v1/ops/create-page');
    expect(await pageIds()).toEqual([TARGET]);
  });
});

describe('fields a route does not take', () => {
  afterEach(resetPool);

  test('a misspelled optional field is refused by name, with the allowed ones', async () => {
    const r = await ctx.w.call<Body>('POST', `/api/v1/ops/${TARGET}/lease`, {
      body: { ttl: 30, tll: 60 },
    });
    expectEnvelope(r, 400, TARGET);
    expect(r.body.error).toBe("Unknown field 'tll' (allowed: ttl)");
    const pool = await ctx.w.call<{ pages: Array<{ page_id: string; leased: boolean }> }>(
      'GET',
      '/api/v1/system/status/pages',
      { auth: false },
    );
    expect(pool.body.pages.find((p) => p.page_id === TARGET)?.leased).toBe(false);
  });

  test('navigate with `timout_s`: 400 before the page moves', async () => {
    const r = await ctx.w.call<Body>('POST', `/api/v1/ops/${TARGET}/navigate`, {
      body: { url: `${ctx.fx.url}/moved`, timout_s: 5 },
    });
    expectEnvelope(r, 400, TARGET);
    expect(r.body.error).toBe("Unknown field 'timout_s' (allowed: url)");
    expect(ctx.fx.seen).not.toContain('GET /moved');
  });

  test('create-page with an unknown field creates no page', async () => {
    const r = await ctx.w.call<Body>('POST', '/api/v1/ops/create-page', {
      body: { page_id: 'p-new', pageid: 'p-new' },
    });
    expectEnvelope(r, 400, null);
    expect(r.body.error).toBe("Unknown field 'pageid' (allowed: page_id)");
    expect(await pageIds()).toEqual([TARGET]);
  });

  test('a route without fields names that it takes none', async () => {
    const r = await ctx.w.call<Body>('POST', `/api/v1/primitive/${TARGET}/press-enter`, {
      body: { key: 'Enter' },
    });
    expectEnvelope(r, 400, TARGET);
    expect(r.body.error).toBe("Unknown field 'key' (this route takes no fields)");
  });

  test('an unknown query field of a route with a query is refused too', async () => {
    const r = await ctx.w.call<Body>('GET', `/api/v1/ops/${TARGET}/screenshot?ful=true`);
    expectEnvelope(r, 400, TARGET);
    expect(r.body.error).toBe("Unknown field 'ful' (allowed: full)");
  });

  test('a plugin refuses a parameter it does not declare, before it runs', async () => {
    const r = await ctx.w.call<Body>('POST', `/api/v1/${TARGET}/plugin/archive/check`, {
      body: { url: 'https://example.com/', paste_probabilty: 0.5 },
    });
    expectEnvelope(r, 400, TARGET);
    expect(r.body.error).toBe(
      "Unknown field 'paste_probabilty' (allowed: direct_nav_probability, paste_probability, url)",
    );
  });

  test('scroll-page keeps the contract: `amount` is ignored and the default used', async () => {
    const r = await ctx.w.call<Body>('POST', `/api/v1/primitive/${TARGET}/scroll-page`, {
      body: { amount: 300, direction: 'down' },
    });
    expect(r.status).toBe(200);
    expect(r.body.success).toBe(true);
    // The default request of 1000 px is inflated by 1.1–1.2 (and ends within one notch).
    expect(r.body.scrolled_distance as number).toBeGreaterThan(900);
  });
});
