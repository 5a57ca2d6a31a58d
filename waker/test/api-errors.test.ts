import fs from 'node:fs';
import type { RunningWaker } from '@persona-browser/testkit/waker';
import {
  KEY,
  ROOT,
  call,
  freePort,
  makePersonas,
  startWaker,
} from '@persona-browser/testkit/waker';

/**
 * The waker's own API answers a client's mistakes as the worker does: the API's error envelope,
 * the `{detail}` of authentication, 405 with `Allow` for a known path and the wrong method,
 * and a query field it does not take refused by name.
 */

type Body = Record<string, unknown>;

let waker: RunningWaker;
let keyless: RunningWaker;

function emptyFleet(): string {
  const { personasDir } = makePersonas({});
  fs.mkdirSync(personasDir, { recursive: true });
  return personasDir;
}

beforeAll(async () => {
  const common = { WAKER_DRIVER: 'process', REPO_ROOT: ROOT };
  waker = await startWaker({
    ...common,
    WAKER_PORT: String(await freePort()),
    PERSONAS_DIR: emptyFleet(),
    FLEET_ID: `apierr${process.pid}`,
  });
  keyless = await startWaker({
    ...common,
    WAKER_PORT: String(await freePort()),
    PERSONAS_DIR: emptyFleet(),
    FLEET_ID: `apinokey${process.pid}`,
    SERVICE_KEY: '',
  });
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
