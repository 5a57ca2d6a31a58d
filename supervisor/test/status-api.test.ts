import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { SupervisorStatus } from '@persona-browser/contracts';
import { SUPERVISOR_PATHS } from '@persona-browser/contracts';
import { createStatusServer } from '../src/server';

/**
 * The supervisor's status route answers a client's mistakes as the worker and the waker do:
 * the `{detail}` bodies of authentication, the API's envelope, 405 with `Allow`.
 */

const KEY = 'supervisor-status-key';
const STATUS: SupervisorStatus = {
  state: 'idle',
  commit: null,
  healthy_commit: null,
  upstream: null,
  refused: null,
  halted: null,
  remote: { url: null, reachable: null, checked_at: null, error: null },
  last_update: null,
  bad_commits: [],
  log: [],
  waker: { pid: null, running: false },
};

const servers: http.Server[] = [];

async function serve(serviceKey: string | null): Promise<string> {
  const server = createStatusServer(() => STATUS, serviceKey);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

afterAll(async () => {
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
});

async function get(
  url: string,
  init: RequestInit = {},
): Promise<{ status: number; body: unknown; allow: string | null }> {
  const res = await fetch(url, init);
  return { status: res.status, body: await res.json(), allow: res.headers.get('allow') };
}

test('the right key reads the status; the auth scheme is case-insensitive', async () => {
  const base = await serve(KEY);
  for (const scheme of ['Bearer', 'bearer', 'BEARER']) {
    const r = await get(`${base}${SUPERVISOR_PATHS.status}`, {
      headers: { authorization: `${scheme} ${KEY}` },
    });
    expect(r).toEqual({ status: 200, body: STATUS, allow: null });
  }
});

test('a missing or wrong key: 401 {detail: "Invalid API key"}', async () => {
  const base = await serve(KEY);
  const sent: Array<Record<string, string>> = [
    {},
    { authorization: 'Bearer wrong' },
    { authorization: KEY },
  ];
  for (const headers of sent) {
    const r = await get(`${base}${SUPERVISOR_PATHS.status}`, { headers });
    expect(r).toEqual({ status: 401, body: { detail: 'Invalid API key' }, allow: null });
  }
});

test('started without SERVICE_KEY: 500 {detail: "Server not properly configured"}', async () => {
  const base = await serve(null);
  const r = await get(`${base}${SUPERVISOR_PATHS.status}`, {
    headers: { authorization: `Bearer ${KEY}` },
  });
  expect(r).toEqual({
    status: 500,
    body: { detail: 'Server not properly configured' },
    allow: null,
  });
});

test('the wrong method: 405 with Allow and the envelope', async () => {
  const base = await serve(KEY);
  const r = await get(`${base}${SUPERVISOR_PATHS.status}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${KEY}` },
  });
  expect(r).toEqual({
    status: 405,
    body: {
      success: false,
      error: `Method POST not allowed on ${SUPERVISOR_PATHS.status} (allowed: GET)`,
      page_id: null,
    },
    allow: 'GET, HEAD',
  });
});

test('an unknown route: 404 envelope naming it', async () => {
  const base = await serve(KEY);
  const r = await get(`${base}/api/elsewhere?x=1`);
  expect(r).toEqual({
    status: 404,
    body: { success: false, error: 'No route GET /api/elsewhere', page_id: null },
    allow: null,
  });
});
