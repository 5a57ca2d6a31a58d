import { startFixture } from '@persona-browser/testkit/fixture';
import { useSiteWorker } from '@persona-browser/testkit/site-worker';
import { PROBE_TIMEOUT_MS } from '../src/browser/managed-page';

/**
 * A page whose renderer hangs (a script that never yields) must not take the worker or the
 * other pages with it: calls on it answer at once, a call caught in the hang stops within
 * seconds, pages of the same site go on working, and a navigation brings the hung page back.
 */

type Body = Record<string, any>;
const file = useSiteWorker({ site: startFixture, pages: ['hung', 'same1', 'same2'] });

beforeAll(async () => {
  const { w, site } = file;
  await w.call('POST', '/api/v1/ops/same1/navigate', { body: { url: `${site.url}/` } });
  await w.call('POST', '/api/v1/ops/same2/navigate', { body: { url: `${site.url}/second` } });
});

async function stateOf(id: string): Promise<string | undefined> {
  const r = await file.w.call<Body>('GET', '/api/v1/system/status/pages', { auth: false });
  return (r.body.pages as Body[]).find((p) => p.page_id === id)?.state as string | undefined;
}

async function waitFor(id: string, state: string, timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  while ((await stateOf(id)) !== state) {
    if (Date.now() > until) throw new Error(`${id} never became ${state}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Far from the 120 s a CDP command on a hung renderer waits before it gives up. */
const NOT_HUNG_MS = 20_000;

const isPng = (b64: unknown): boolean =>
  typeof b64 === 'string' && Buffer.from(b64, 'base64').subarray(1, 4).toString() === 'PNG';

/**
 * Hangs page 'hung' by a click: a navigation first (it brings back a page hung before), then the
 * press that hangs the renderer (the rest of the click can never be delivered). The click's reply.
 */
async function hang(): Promise<{ status: number; body: Body; ms: number }> {
  await file.w.call('POST', '/api/v1/ops/hung/navigate', {
    body: { url: `${file.site.url}/freeze-on-click` },
  });
  return file.w.call<Body>('POST', '/api/v1/primitive/hung/click-element', {
    body: { selector: '#freeze' },
  });
}

/** Page 'hung' is stuck: as a test before left it, else hung now. */
async function stuck(): Promise<void> {
  if ((await stateOf('hung')) !== 'stuck') await hang();
  await waitFor('hung', 'stuck', 15_000);
}

test('a call caught in the hang stops within seconds with a clear error, not at the protocol timeout', async () => {
  const r = await hang();
  expect(r.status).toBe(200);
  expect(r.body).toEqual({
    success: false,
    error: expect.stringMatching(/stuck/),
    page_id: 'hung',
  });
  // Found stuck by the health probe (4 s without an answer, probed every 2 s), far from the
  // 120 s a CDP command waits before it gives up.
  expect(r.ms).toBeLessThan(NOT_HUNG_MS);
  expect(await stateOf('hung')).toBe('stuck');
});

test('calls on a stuck page answer at once; pages of the same site keep working', async () => {
  await stuck();
  for (const [method, route] of [
    ['POST', '/api/v1/ops/hung/extract-content'],
    ['GET', '/api/v1/ops/hung/screenshot'],
    ['POST', '/api/v1/primitive/hung/press-enter'],
  ] as const) {
    const r = await file.w.call<Body>(method, route);
    expect({ route, status: r.status, body: r.body }).toEqual({
      route,
      status: 200,
      body: { success: false, error: expect.stringMatching(/stuck/), page_id: 'hung' },
    });
    // Refused from the page's state: no health probe waited for.
    expect(r.ms).toBeLessThan(PROBE_TIMEOUT_MS);
  }
  for (const id of ['same1', 'same2']) {
    const shot = await file.w.call<Body>('GET', `/api/v1/ops/${id}/screenshot`);
    expect(shot.body.success).toBe(true);
    expect(isPng(shot.body.screenshot)).toBe(true);
    expect(shot.ms).toBeLessThan(NOT_HUNG_MS);
    const read = await file.w.call<Body>('POST', `/api/v1/ops/${id}/extract-content`);
    expect(read.body).toMatchObject({ success: true });
    expect(read.ms).toBeLessThan(NOT_HUNG_MS);
  }
  expect(await stateOf('same1')).toBe('idle');
  expect(await stateOf('same2')).toBe('idle');
});

test('a navigation stops the hung script and brings the page back', async () => {
  await stuck();
  const back = await file.w.call<Body>('POST', '/api/v1/ops/hung/navigate', {
    body: { url: `${file.site.url}/second` },
  });
  expect(back.body).toMatchObject({
    success: true,
    status_code: 200,
    final_url: `${file.site.url}/second`,
  });
  await waitFor('hung', 'idle', 10_000);
  const read = await file.w.call<Body>('POST', '/api/v1/ops/hung/extract-content');
  expect(read.body).toMatchObject({ success: true, title: 'Second page' });
  // The pointer was let go when the click was stopped: a new click on the page works.
  const click = await file.w.call<Body>('POST', '/api/v1/primitive/hung/click-element', {
    body: { selector: '#second' },
  });
  expect(click.body.success).toBe(true);
});

/** `work`'s result, and every state page `id` showed in the status while it ran. */
async function statesWhile<T>(
  id: string,
  work: () => Promise<T>,
): Promise<{ result: T; states: Set<string | undefined> }> {
  const states = new Set<string | undefined>();
  let working = true;
  const watch = (async () => {
    while (working) {
      states.add(await stateOf(id));
      await new Promise((r) => setTimeout(r, 200));
    }
  })();
  try {
    return { result: await work(), states };
  } finally {
    working = false;
    await watch;
  }
}

test('a page waiting on a slow server is not stuck: the calls after its navigation work', async () => {
  // A new page (about:blank) going to the site waits 6 s for its answer: the health probe asks
  // meanwhile, and DevTools holds the question until the new document commits.
  await file.w.call('POST', '/api/v1/ops/create-page', { body: { page_id: 'slow' } });
  const { result: nav, states } = await statesWhile('slow', () =>
    file.w.call<Body>('POST', '/api/v1/ops/slow/navigate', {
      body: { url: `${file.site.url}/slow?ms=6000` },
    }),
  );
  expect(nav.body).toMatchObject({ success: true, status_code: 200 });
  expect(states.has('stuck')).toBe(false);
  const read = await file.w.call<Body>('POST', '/api/v1/ops/slow/extract-content');
  expect(read.body).toMatchObject({ success: true });
  expect(read.body.content).toContain('after 6000 ms');
});

test('a click on a link to a slow server is not stuck: a call made while the new page loads waits for it, and works', async () => {
  // The page the link opens answers after 6 s: the click answers before that, and DevTools holds
  // every question to the page until the new document commits, the health probes' too, longer
  // than a probe waits for its answer.
  const { w, site } = file;
  await w.call('POST', '/api/v1/ops/create-page', { body: { page_id: 'link' } });
  const opened = await w.call<Body>('POST', '/api/v1/ops/link/navigate', {
    body: { url: `${site.url}/link?to=${encodeURIComponent('/slow?ms=6000')}` },
  });
  expect(opened.body).toMatchObject({ success: true, status_code: 200 });
  const { result, states } = await statesWhile('link', async () => {
    const click = await w.call<Body>('POST', '/api/v1/primitive/link/click-element', {
      body: { selector: '#link' },
    });
    return { click, read: await w.call<Body>('POST', '/api/v1/ops/link/extract-content') };
  });
  expect(result.click.body).toMatchObject({ success: true });
  expect(states.has('stuck')).toBe(false);
  expect(result.read.body).toMatchObject({ success: true });
  expect(result.read.body.content).toContain('after 6000 ms');
});
