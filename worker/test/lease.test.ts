import type { Fixture } from '@persona-browser/testkit/fixture';
import { startFixture } from '@persona-browser/testkit/fixture';
import type { RunningWorker } from '@persona-browser/testkit/worker';
import { sleep, startWorker } from '@persona-browser/testkit/worker';
import { until } from '@persona-browser/testkit/waker';
import { DEFAULT_TIMING } from '../src/browser/timing';

/** The shortest pre-navigation pause a navigate call pays (the default, less its 10 %). */
const PAUSE_MIN_MS = DEFAULT_TIMING.navigatePauseMs * 0.9;

let w: RunningWorker;
let site: Fixture;
type Body = Record<string, any>;

/** Each test's two pages, made for it: `back` made last, so in front of `front`. */
let front: string;
let back: string;
let made = 0;

beforeAll(async () => {
  site = await startFixture();
  w = await startWorker();
  await w.waitInitialized();
});
beforeEach(async () => {
  made += 1;
  front = `front${made}`;
  back = `back${made}`;
  for (const id of [front, back]) {
    const created = await w.call('POST', '/api/v1/ops/create-page', { body: { page_id: id } });
    expect(created.status).toBe(200);
    await w.call('POST', `/api/v1/ops/${id}/navigate`, { body: { url: `${site.url}/visibility` } });
  }
});
afterEach(async () => {
  for (const id of [front, back]) await w.call('DELETE', `/api/v1/ops/${id}/destroy-page`);
});
afterAll(async () => {
  await w?.stop();
  await site?.close();
});

const lease = (id: string, opts: { ttl?: number; token?: string } = {}) =>
  w.call<Body>('POST', `/api/v1/ops/${id}/lease`, {
    body: opts.ttl === undefined ? {} : { ttl: opts.ttl },
    lease: opts.token,
  });
const release = (id: string, token?: string) =>
  w.call<Body>('DELETE', `/api/v1/ops/${id}/lease`, { lease: token });
const title = async (id: string, token?: string): Promise<string> =>
  (await w.call<Body>('POST', `/api/v1/ops/${id}/extract-content`, { lease: token })).body
    .title as string;
async function entry(id: string): Promise<Body> {
  const r = await w.call<Body>('GET', '/api/v1/system/status/pages', { auth: false });
  return (r.body.pages as Body[]).find((p) => p.page_id === id) as Body;
}

describe('lease table', () => {
  test('unleased → leased: a token, the default ttl of 300 s, the page brought to the foreground', async () => {
    // The back page was created last, so the front page is behind it.
    expect(await title(front)).toBe('hidden');
    const r = await lease(front);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      success: true,
      page_id: front,
      lease_token: expect.any(String),
      ttl: 300,
    });
    expect(await title(front, r.body.lease_token)).toBe('visible');
    expect(await entry(front)).toMatchObject({ leased: true });
    expect((await entry(front)).lease_expires_in).toBeGreaterThan(295);
    await release(front, r.body.lease_token);
  });

  test('the holder renews with its token: same token, new ttl; anyone else gets 423', async () => {
    const first = await lease(front, { ttl: 100 });
    const token = first.body.lease_token as string;
    const renewed = await lease(front, { ttl: 50, token });
    expect(renewed.body).toMatchObject({ lease_token: token, ttl: 50 });
    expect((await entry(front)).lease_expires_in).toBeLessThanOrEqual(50);
    const other = await lease(front);
    expect(other.status).toBe(423);
    expect(other.body).toMatchObject({ success: false, page_id: front });
    const wrong = await lease(front, { token: 'not-the-token' });
    expect(wrong.status).toBe(423);
    await release(front, token);
  });

  test('calls without the matching X-Lease get 423 at once; the holder works and brings the page forward', async () => {
    const token = (await lease(back, { ttl: 60 })).body.lease_token as string;
    await title(front); // any call on another page
    for (const opts of [{}, { lease: 'wrong' }]) {
      const nav = await w.call<Body>('POST', `/api/v1/ops/${back}/navigate`, {
        body: { url: site.url },
        ...opts,
      });
      expect(nav.status).toBe(423);
      expect(nav.ms).toBeLessThan(PAUSE_MIN_MS); // refused before the pre-navigation pause ends
      for (const [method, path] of [
        ['POST', `/api/v1/ops/${back}/extract-content`],
        ['GET', `/api/v1/ops/${back}/screenshot`],
        ['DELETE', `/api/v1/ops/${back}/destroy-page`],
        ['POST', `/api/v1/ops/${back}/destroy-page`],
      ] as const) {
        expect((await w.call(method, path, opts)).status).toBe(423);
      }
    }
    expect(await entry(back)).toMatchObject({ leased: true });
    // Bring front forward by leasing it, then a call on back with its token puts back in front
    // again.
    const frontToken = (await lease(front)).body.lease_token as string;
    expect(await title(front, frontToken)).toBe('visible');
    expect(await title(back, token)).toBe('visible');
    expect(await title(front, frontToken)).toBe('visible'); // and the call on front brings it back
    await release(front, frontToken);
    await release(back, token);
  });

  test('release: the holder frees the page; a non-holder gets 423 and the lease stays', async () => {
    const token = (await lease(back)).body.lease_token as string;
    expect((await release(back)).status).toBe(423);
    expect((await release(back, 'nope')).status).toBe(423);
    expect(await entry(back)).toMatchObject({ leased: true });
    const r = await release(back, token);
    expect(r.body).toEqual({ success: true, page_id: back, message: expect.any(String) });
    expect(await entry(back)).toMatchObject({ leased: false, lease_expires_in: null });
    expect((await w.call('POST', `/api/v1/ops/${back}/extract-content`)).status).toBe(200);
  });

  test('the holder renews while its own long call runs on the page, without waiting for it', async () => {
    const token = (await lease(back, { ttl: 30 })).body.lease_token as string;
    const slowAsked = (): number => site.seen.filter((r) => r === 'GET /slow').length;
    const asked = slowAsked();
    let navigated = false;
    const slow = w
      .call('POST', `/api/v1/ops/${back}/navigate`, {
        body: { url: `${site.url}/slow?ms=4000` },
        lease: token,
      })
      .then((r) => {
        navigated = true;
        return r;
      });
    // The navigation runs: the page has asked for the slow response (4 s).
    await until(
      async () => (slowAsked() > asked ? true : null),
      10_000,
      'the page to ask the fixture for /slow',
    );
    const renewed = await lease(back, { ttl: 60, token });
    // Answered while the navigation still ran: the renewal did not queue behind it.
    expect(navigated).toBe(false);
    expect(renewed.body).toMatchObject({ lease_token: token, ttl: 60 });
    // Another client's lease request still meets the lease.
    expect((await lease(back)).status).toBe(423);
    expect((await slow).body).toMatchObject({ success: true });
    expect((await release(back, token)).status).toBe(200);
  });

  test('a lease expires ttl seconds after the last call that used it, not after it was taken', async () => {
    // Measured as relations on the worker's own countdown (lease_expires_in), with no margin
    // that a slow machine could eat: a lease never ends before ttl after its last use.
    const TTL = 3;
    const token = (await lease(back, { ttl: TTL })).body.lease_token as string;
    // Time itself is tested: a lease never ends before its ttl.
    await sleep(1_500);
    const before = (await entry(back)).lease_expires_in as number;
    expect(before).toBeLessThanOrEqual(TTL - 1.5);
    const usedAt = Date.now();
    expect(
      (await w.call('POST', `/api/v1/ops/${back}/extract-content`, { lease: token })).status,
    ).toBe(200);
    const renewed = (await entry(back)).lease_expires_in as number;
    // The call renewed it: more time is left than before the call, although time went by.
    expect(renewed).toBeGreaterThan(before);
    expect(renewed).toBeLessThanOrEqual(TTL);
    expect((await w.call('POST', `/api/v1/ops/${back}/extract-content`)).status).toBe(423);
    await until(
      async () => ((await entry(back)).leased ? null : true),
      TTL * 1000 + 10_000,
      `the lease on ${back} to lapse`,
    );
    const heldMs = Date.now() - usedAt;
    // Not before ttl after the last use (counted from before that call even started)…
    expect(heldMs).toBeGreaterThanOrEqual(TTL * 1000);
    // …and not for long after it (it was taken 1.5 s before that use).
    expect(heldMs).toBeLessThan(TTL * 1000 + 3_000);
    expect((await w.call('POST', `/api/v1/ops/${back}/extract-content`)).status).toBe(200);
  });

  test('ttl bounds, unknown pages, and destroy by the holder', async () => {
    for (const ttl of [0, -1, 3601, 'abc']) {
      const r = await w.call<Body>('POST', `/api/v1/ops/${back}/lease`, { body: { ttl } });
      expect(r.status).toBe(400);
      expect(r.body.error).toMatch(/ttl/);
    }
    const taken = await lease(back, { ttl: 3600 });
    expect(taken.body.ttl).toBe(3600);
    const missing = await lease('nobody');
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ success: false, error: 'Page not found', page_id: 'nobody' });
    const destroyed = await w.call<Body>('DELETE', `/api/v1/ops/${back}/destroy-page`, {
      lease: taken.body.lease_token as string,
    });
    expect(destroyed.body).toMatchObject({ success: true, total_pages: 1 });
    expect(await entry(back)).toBeUndefined();
    // A page created again under the same id starts unleased.
    await w.call('POST', '/api/v1/ops/create-page', { body: { page_id: back } });
    expect(await entry(back)).toMatchObject({ leased: false });
  });
});
