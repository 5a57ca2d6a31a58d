import fs from 'node:fs';
import type { Body } from '@persona-browser/testkit/mistakes';
import { TARGET, useMistakeWorker } from '@persona-browser/testkit/mistakes';
import type { CallOptions, RunningWorker } from '@persona-browser/testkit/worker';
import { KEY, startWorker } from '@persona-browser/testkit/worker';

/**
 * Authentication (docs/api.md) through the real worker: who gets 401 or 500 `{detail}`, and that a
 * refused call changed nothing.
 */

// This file presents well over a hundred wrong credentials from one address: with the throttle
// on they would meet 429 (auth-scopes.test.ts tests the throttle on a worker of its own).
const { ctx, poolPages, pageIds, updateTrigger } = useMistakeWorker({
  AUTH_FAILURES_PER_MINUTE: '0',
});

describe('authentication', () => {
  const t = `/api/v1/ops/${TARGET}`;
  const authenticated: Array<[string, string, CallOptions?]> = [
    ['POST', '/api/v1/ops/create-page', { body: { page_id: 'intruder' } }],
    ['POST', '/api/v1/ops/create-page'],
    ['POST', `${t}/navigate`, { body: { url: 'http://127.0.0.1:9/' } }],
    ['POST', `${t}/extract-content`],
    ['GET', `${t}/screenshot`],
    ['GET', `${t}/screenshot?full=true`],
    ['POST', `${t}/destroy-page`],
    ['DELETE', `${t}/destroy-page`],
    ['POST', `${t}/lease`, { body: { ttl: 60 } }],
    ['DELETE', `${t}/lease`],
    ['GET', '/api/v1/system/start'],
    ['GET', '/api/v1/system/stop'],
    // With a valid key this would end the worker: it is only ever called without one.
    ['GET', '/api/v1/system/kill'],
    ['GET', '/api/v1/system/update'],
    ['GET', '/api/v1/system/metrics'],
  ];

  const badCredentials: Array<[string, Record<string, string> | null]> = [
    ['no Authorization header', null],
    ['a wrong token', { authorization: 'Bearer not-the-key' }],
    ['the key with different case', { authorization: `Bearer ${KEY.toUpperCase()}` }],
    ['the key with a suffix', { authorization: `Bearer ${KEY}x` }],
    ['a Bearer scheme without token', { authorization: 'Bearer' }],
    ['the bare key without scheme', { authorization: KEY }],
    ['the key under the Basic scheme', { authorization: `Basic ${KEY}` }],
    [
      'user:key under the Basic scheme',
      { authorization: `Basic ${Buffer.from(`user:${KEY}`).toString('base64')}` },
    ],
    ['the key under a Token scheme', { authorization: `Token ${KEY}` }],
    ['the key in an X-API-Key header', { 'x-api-key': KEY }],
  ];

  test.each(badCredentials)('%s: 401 {detail: "Invalid API key"} on every route', async (_, h) => {
    const seen: Array<{ route: string; status: number; body: unknown }> = [];
    for (const [method, route, opts] of authenticated) {
      // The helper adds the valid key unless told not to, or given an Authorization header.
      const auth = Boolean(h && 'authorization' in h);
      const r = await ctx.w.call(method, route, { ...opts, auth, headers: h ?? undefined });
      seen.push({ route: `${method} ${route}`, status: r.status, body: r.body });
    }
    expect(seen).toEqual(
      authenticated.map(([method, route]) => ({
        route: `${method} ${route}`,
        status: 401,
        body: { detail: 'Invalid API key' },
      })),
    );
  });

  test('rejected calls had no effect: same pages, blank target, no lease', async () => {
    expect(await pageIds()).toEqual([TARGET]);
    const [target] = await poolPages();
    expect(target).toMatchObject({ page_id: TARGET, url: 'about:blank', leased: false });
    // The target page survived start/stop attempts: the navigator was never restarted.
    const r = await ctx.w.call<Body>('POST', `${t}/extract-content`);
    expect(r.status).toBe(200);
    expect(r.body.url).toBe('about:blank');
  });

  test('a rejected update does not touch .update-trigger', async () => {
    fs.rmSync(updateTrigger(), { force: true });
    const r = await ctx.w.call('GET', '/api/v1/system/update', { auth: false });
    expect(r.status).toBe(401);
    expect(fs.existsSync(updateTrigger())).toBe(false);
  });

  test('auth is checked before the page lookup and before body validation', async () => {
    const ghost = await ctx.w.call('POST', '/api/v1/ops/ghost/extract-content', { auth: false });
    expect({ status: ghost.status, body: ghost.body }).toEqual({
      status: 401,
      body: { detail: 'Invalid API key' },
    });
    const badBody = await ctx.w.call('POST', `${t}/navigate`, { auth: false, body: { url: 5 } });
    expect({ status: badBody.status, body: badBody.body }).toEqual({
      status: 401,
      body: { detail: 'Invalid API key' },
    });
  });

  test('the right key is accepted (the same calls succeed with it)', async () => {
    const r = await ctx.w.call<Body>('GET', `${t}/screenshot`);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ success: true, page_id: TARGET });
    const metrics = await ctx.w.call('GET', '/api/v1/system/metrics');
    expect(metrics.status).toBe(404); // past auth: the waker is simply not running
  });

  test.each([
    ['status', '/api/v1/system/status'],
    ['status/pages', '/api/v1/system/status/pages'],
  ])('%s answers without a key, and the same with a wrong one', async (_, route) => {
    const none = await ctx.w.call<Body>('GET', route, { auth: false });
    expect(none.status).toBe(200);
    expect(none.body).not.toHaveProperty('detail');
    const wrong = await ctx.w.call<Body>('GET', route, {
      headers: { authorization: 'Bearer wrong' },
    });
    expect({ status: wrong.status, body: wrong.body }).toEqual({ status: 200, body: none.body });
  });

  test('ping answers without a key, and with a wrong one', async () => {
    for (const headers of [{}, { authorization: 'Bearer wrong' }] as Record<string, string>[]) {
      const r = await ctx.w.call<Body>('GET', '/api/v1/system/ping', { auth: false, headers });
      expect({ status: r.status, alive: r.body.status }).toEqual({ status: 200, alive: 'alive' });
    }
  });

  describe('a worker started without SERVICE_KEY', () => {
    let bare: RunningWorker;

    beforeAll(async () => {
      // An empty value is how a caller unsets it: config treats '' as absent.
      bare = await startWorker({ persona: 'keyless', env: { SERVICE_KEY: '' } });
      await bare.waitInitialized();
    });
    afterAll(async () => {
      await bare?.stop();
    });

    test('every authenticated call answers 500 {detail: "Server not properly configured"}', async () => {
      const seen: Array<{ route: string; status: number; body: unknown }> = [];
      for (const [method, route, opts] of authenticated) {
        for (const headers of [
          undefined,
          { authorization: `Bearer ${KEY}` },
          { authorization: 'Bearer ' },
        ]) {
          const r = await bare.call(method, route, { ...opts, auth: false, headers });
          seen.push({ route: `${method} ${route}`, status: r.status, body: r.body });
        }
      }
      expect(seen).toEqual(
        seen.map((s) => ({
          route: s.route,
          status: 500,
          body: { detail: 'Server not properly configured' },
        })),
      );
      expect(seen).toHaveLength(authenticated.length * 3);
    });

    test('it stays up and its unauthenticated routes still work', async () => {
      expect(bare.proc.exitCode).toBeNull();
      const status = await bare.call<Body>('GET', '/api/v1/system/status', { auth: false });
      expect(status.status).toBe(200);
      expect(status.body).toMatchObject({ initialized: true, page_count: 0 });
      const pages = await bare.call<Body>('GET', '/api/v1/system/status/pages', { auth: false });
      expect(pages.status).toBe(200);
      expect(pages.body).toMatchObject({ total_pages: 0, max_pages: 5, pages: [] });
      const ping = await bare.call<Body>('GET', '/api/v1/system/ping', { auth: false });
      expect(ping.status).toBe(200);
      expect(ping.body).toMatchObject({ status: 'alive', persona: 'keyless' });
    });
  });
});
