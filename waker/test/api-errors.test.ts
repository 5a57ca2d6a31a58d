import type { RunningWaker } from '@persona-browser/testkit/waker';
import { KEY, call, freePort } from '@persona-browser/testkit/waker';
import { startFleet } from '@persona-browser/testkit/fleet';

/**
 * The waker's own API answers a client's mistakes as the worker does: the API's error envelope,
 * the `{detail}` of authentication, 405 with `Allow` for a known path and the wrong method,
 * and a query field it does not take refused by name.
 */

type Body = Record<string, unknown>;

let waker: RunningWaker;
let keyless: RunningWaker;

beforeAll(async () => {
  // One sleepy persona that is never woken here (the process driver, one server).
  ({ waker } = await startFleet({
    driver: 'process',
    fleet: `apierr${process.pid}`,
    port: await freePort(),
    personas: { sam: `PORT=${await freePort()}\nMODE=sleepy\nIDLE_TIMEOUT=600\n` },
  }));
  ({ waker: keyless } = await startFleet({
    driver: 'process',
    fleet: `apinokey${process.pid}`,
    port: await freePort(),
    personas: {},
    env: { SERVICE_KEY: '' },
  }));
});

afterAll(async () => {
  await waker?.stop();
  await keyless?.stop();
});

const envelope = (error: unknown): Body => ({ success: false, error, page_id: null });

test('a missing or wrong key: 401 {detail: "Invalid API key"}', async () => {
  for (const key of [null, 'wrong', `${KEY}x`]) {
    const r = await call<Body>(`${waker.url}/api/personas`, { key });
    expect({ status: r.status, body: r.body }).toEqual({
      status: 401,
      body: { detail: 'Invalid API key' },
    });
  }
});

test('the auth scheme is case-insensitive, as HTTP says', async () => {
  const res = await fetch(`${waker.url}/api/personas`, {
    headers: { authorization: `bearer ${KEY}` },
  });
  expect(res.status).toBe(200);
});

test('a waker started without SERVICE_KEY: 500 {detail: "Server not properly configured"}', async () => {
  const r = await call<Body>(`${keyless.url}/api/personas`);
  expect({ status: r.status, body: r.body }).toEqual({
    status: 500,
    body: { detail: 'Server not properly configured' },
  });
});

test.each([
  ['POST', '/api/personas', 'GET, HEAD'],
  ['GET', '/api/personas/alice/wake', 'POST'],
  ['DELETE', '/api/health', 'GET, HEAD'],
])('%s %s: 405 with Allow %s and the envelope', async (method, route, allow) => {
  const r = await call<Body>(`${waker.url}${route}`, { method });
  expect(r.status).toBe(405);
  expect(r.headers.get('allow')).toBe(allow);
  expect(r.body).toEqual(
    envelope(`Method ${method} not allowed on ${route} (allowed: ${allow.replace(', HEAD', '')})`),
  );
});

test('an unknown route under /api: 404 envelope naming it', async () => {
  const r = await call<Body>(`${waker.url}/api/nothing/here?x=1`);
  expect(r.status).toBe(404);
  expect(r.body).toEqual(envelope('No route GET /api/nothing/here'));
});

test('an unknown persona: 404 envelope naming it', async () => {
  const r = await call<Body>(`${waker.url}/api/personas/zed/wake`, { method: 'POST' });
  expect(r.status).toBe(404);
  expect(r.body).toMatchObject({ success: false, page_id: null });
  expect(r.body.error).toContain('zed');
});

test('a misspelled query field is refused by name', async () => {
  const r = await call<Body>(`${waker.url}/api/personas/zed/requests?hour=3`);
  expect(r.status).toBe(400);
  expect(r.body).toEqual(envelope("Unknown field 'hour' (allowed: hours)"));
});

describe('POST /api/personas/{name}/move', () => {
  const move = (body: unknown, name = 'sam'): Promise<{ status: number; body: Body }> =>
    fetch(`${waker.url}/api/personas/${name}/move`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    }).then(async (r) => ({ status: r.status, body: (await r.json()) as Body }));

  test('a missing, misspelled or malformed node is refused by name', async () => {
    expect(await move({})).toEqual({ status: 400, body: envelope("'node' is required") });
    expect(await move({ node: 'w1', nod: 'w1' })).toEqual({
      status: 400,
      body: envelope("Unknown field 'nod' (allowed: node)"),
    });
    const bad = await move({ node: 'a b' });
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual(envelope("'node' must be a node's hostname"));
    const notJson = await move('{node:');
    expect(notJson.status).toBe(400);
    expect(notJson.body).toMatchObject({ success: false, page_id: null });
  });

  test('on one server there is nowhere to move: 409 saying so; an unknown persona is 404', async () => {
    expect(await move({ node: 'w1' })).toEqual({
      status: 409,
      body: envelope('moving a persona needs a cluster (WAKER_DRIVER=swarm)'),
    });
    expect((await move({ node: 'w1' }, 'zed')).status).toBe(404);
    // Nothing started: the persona still sleeps.
    const list = await call<{ personas: Array<{ state: string }> }>(`${waker.url}/api/personas`);
    expect(list.body.personas[0]?.state).toBe('sleeping');
  });
});
