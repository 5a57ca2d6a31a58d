import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { RefusalReason, TokenClaims, TokenScope } from '@persona-browser/service-kit';
import { REFUSAL_REASONS, TokenSigner, newTokenId } from '@persona-browser/service-kit';
import { connectAgent } from '@persona-browser/testkit/agent';
import { parseExposition, valueOf } from '@persona-browser/testkit/prometheus';
import type { LogRow } from '@persona-browser/testkit/request-log-file';
import { readLogRows } from '@persona-browser/testkit/request-log-file';
import type { RunningWorker } from '@persona-browser/testkit/worker';
import { KEY, sleep, startWorker } from '@persona-browser/testkit/worker';

/**
 * The worker's own door with scoped tokens (docs/api.md, Authentication), through one real
 * worker: what each scope opens on REST, DevTools discovery and MCP, a token's persona, page,
 * expiry and revocation, the throttle of an address that keeps failing, the refusal metric and
 * the request log's credential. Tokens are made here with the signer the waker uses.
 *
 * Failed attempts are counted per client address, so each test that fails on purpose sends
 * from an address of its own on the loopback network (127.0.0.N): the throttle of one test
 * never answers another's refusal.
 */

const PERSONA = 'scopes';
/** Small, so that a burst meets it quickly; each address below stays under it unless it means to. */
const FAILURES_PER_MINUTE = 5;
const P1 = 'page-one';
const P2 = 'page-two';
const PAGE_URL = 'data:text/html,<title>scoped</title><p>hello</p>';

let w: RunningWorker;
const signer = new TokenSigner(KEY);

type Body = Record<string, unknown>;

interface Answer {
  status: number;
  body: Body;
  headers: http.IncomingHttpHeaders;
}

let lastHost = 10;
/** A loopback address no earlier test sent from (the throttle's key). */
const freshAddress = (): string => `127.0.0.${++lastHost}`;

/** One request from the local address `from`, with `bearer` (a key or a token) if given. */
function callFrom(
  from: string,
  method: string,
  route: string,
  o: { bearer?: string; body?: unknown; rawBody?: string } = {},
): Promise<Answer> {
  const payload = o.rawBody ?? (o.body === undefined ? undefined : JSON.stringify(o.body));
  const headers: http.OutgoingHttpHeaders = {};
  if (o.bearer !== undefined) headers.authorization = `Bearer ${o.bearer}`;
  if (payload !== undefined) {
    headers['content-type'] = 'application/json';
    headers['content-length'] = Buffer.byteLength(payload);
  }
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port: w.port,
        localAddress: from,
        method,
        path: route,
        headers,
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString();
          let body: Body = {};
          try {
            body = JSON.parse(text) as Body;
          } catch {
            body = { text };
          }
          resolve({ status: res.statusCode ?? 0, body, headers: res.headers });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

/** A token of this worker's persona (unless told otherwise), valid for an hour. */
function token(scope: TokenScope, over: Partial<TokenClaims> = {}): string {
  return signer.sign(claims(scope, over));
}

function claims(scope: TokenScope, over: Partial<TokenClaims> = {}): TokenClaims {
  return {
    id: newTokenId(),
    persona: PERSONA,
    scope,
    page_id: null,
    label: null,
    exp: Math.floor(Date.now() / 1000) + 3600,
    ...over,
  };
}

const ops = (page: string, action: string): string => `/api/v1/ops/${page}/${action}`;

/** Reading calls: the routes a `read` token opens. */
const READS: Array<[string, string, unknown?]> = [
  ['GET', ops(P1, 'screenshot')],
  ['POST', ops(P1, 'extract-content')],
  ['GET', ops(P1, 'network')],
  ['GET', ops(P1, 'snapshot')],
];

/** Calls that act on the browser or reach beyond the persona. */
const ACTS: Array<[string, string, unknown?]> = [
  ['POST', ops(P1, 'navigate'), { url: PAGE_URL }],
  ['POST', '/api/v1/ops/create-page', { page_id: 'never' }],
  ['POST', `/api/v1/primitive/${P1}/press-enter`],
  ['GET', '/api/v1/system/update'],
];

/** Each call's status, as `METHOD path → status`, for one readable comparison. */
async function statuses(
  from: string,
  bearer: string,
  calls: Array<[string, string, unknown?]>,
): Promise<string[]> {
  const out: string[] = [];
  for (const [method, route, body] of calls) {
    const r = await callFrom(from, method, route, { bearer, body });
    out.push(`${method} ${route} → ${r.status}`);
  }
  return out;
}

const expecting = (calls: Array<[string, string, unknown?]>, status: number): string[] =>
  calls.map(([method, route]) => `${method} ${route} → ${status}`);

const updateTrigger = (): string => path.join(w.dir, '.update-trigger');

async function refusals(): Promise<Record<RefusalReason, number>> {
  const r = await w.call<string>('GET', '/metrics');
  expect(r.status).toBe(200);
  const samples = parseExposition(r.body);
  const out = {} as Record<RefusalReason, number>;
  for (const reason of REFUSAL_REASONS) {
    out[reason] = valueOf(samples, 'persona_browser_worker_auth_refusals_total', { reason });
  }
  return out;
}

beforeAll(async () => {
  w = await startWorker({
    persona: PERSONA,
    env: { AUTH_FAILURES_PER_MINUTE: String(FAILURES_PER_MINUTE) },
  });
  await w.waitInitialized();
  for (const id of [P1, P2]) {
    const r = await w.call('POST', '/api/v1/ops/create-page', { body: { page_id: id } });
    expect(r.status).toBe(200);
  }
  const nav = await w.call('POST', ops(P1, 'navigate'), { body: { url: PAGE_URL } });
  expect(nav.status).toBe(200);
});
afterAll(async () => {
  await w?.stop();
});

describe('each scope opens what it names on REST, and nothing else', () => {
  test('a `read` token reads a page, and neither acts on it nor reaches the fleet', async () => {
    const from = freshAddress();
    const read = token('read');
    expect(await statuses(from, read, READS)).toEqual(expecting(READS, 200));
    expect(await statuses(from, read, ACTS)).toEqual(expecting(ACTS, 403));
    const refused = await callFrom(from, 'POST', ops(P1, 'navigate'), {
      bearer: read,
      body: { url: PAGE_URL },
    });
    expect(refused.body).toEqual({ detail: "Token scope 'read' does not open this route" });
    // What it read is the page itself.
    const content = await callFrom(from, 'POST', ops(P1, 'extract-content'), { bearer: read });
    expect(content.body).toMatchObject({ success: true, page_id: P1, title: 'scoped' });
  });

  test("a `full` token drives the browser, but the fleet-wide routes stay the key's", async () => {
    const from = freshAddress();
    const full = token('full');
    fs.rmSync(updateTrigger(), { force: true });
    const nav = await callFrom(from, 'POST', ops(P2, 'navigate'), {
      bearer: full,
      body: { url: 'data:text/html,<title>by-token</title>' },
    });
    expect(nav.status).toBe(200);
    const pages = await w.call<{ pages: Array<{ page_id: string; title: string }> }>(
      'GET',
      '/api/v1/system/status/pages',
    );
    expect(pages.body.pages.find((p) => p.page_id === P2)?.title).toBe('by-token');
    for (const route of ['/api/v1/system/update', '/api/v1/system/metrics']) {
      const r = await callFrom(from, 'GET', route, { bearer: full });
      expect({ route, status: r.status, body: r.body }).toEqual({
        route,
        status: 403,
        body: { detail: "Token scope 'full' does not open this route" },
      });
    }
    expect(fs.existsSync(updateTrigger())).toBe(false);
  });

  test('a `live` token opens no REST route', async () => {
    const live = token('live');
    const from = freshAddress();
    expect(await statuses(from, live, [...READS, ...ACTS])).toEqual(
      expecting([...READS, ...ACTS], 403),
    );
  });

  test('a page-limited token opens calls on its page only', async () => {
    const from = freshAddress();
    const mine = token('full', { page_id: P1 });
    const own = await callFrom(from, 'GET', ops(P1, 'screenshot'), { bearer: mine });
    expect(own.status).toBe(200);
    for (const [method, route, body] of [
      ['GET', ops(P2, 'screenshot')],
      ['POST', ops(P2, 'navigate'), { url: PAGE_URL }],
      ['POST', '/api/v1/ops/create-page', { page_id: 'other' }],
    ] as Array<[string, string, unknown?]>) {
      const r = await callFrom(from, method, route, { bearer: mine, body });
      expect({ route, status: r.status, body: r.body }).toEqual({
        route,
        status: 403,
        body: { detail: `Token is limited to page ${P1}` },
      });
    }
  });

  test('a path in other letters is held to the route it reaches', async () => {
    const from = freshAddress();
    fs.rmSync(updateTrigger(), { force: true });
    // Express routes paths in any case; the credential check must not take them for files.
    const none = await callFrom(from, 'GET', '/API/V1/SYSTEM/UPDATE');
    expect({ status: none.status, body: none.body }).toEqual({
      status: 401,
      body: { detail: 'Invalid API key' },
    });
    const read = await callFrom(from, 'POST', `/API/V1/OPS/${P1}/NAVIGATE`, {
      bearer: token('read'),
      body: { url: PAGE_URL },
    });
    expect(read.status).toBe(403);
    expect(fs.existsSync(updateTrigger())).toBe(false);
    // The MCP endpoint answers at its own path only.
    const mcp = await callFrom(from, 'GET', '/MCP');
    expect(mcp.status).toBe(404);
  });

  test('the credential is checked before the body is read', async () => {
    const from = freshAddress();
    const broken = await callFrom(from, 'POST', ops(P1, 'navigate'), { rawBody: '{"url": ' });
    expect({ status: broken.status, body: broken.body }).toEqual({
      status: 401,
      body: { detail: 'Invalid API key' },
    });
    const withKey = await callFrom(from, 'POST', ops(P1, 'navigate'), {
      bearer: KEY,
      rawBody: '{"url": ',
    });
    expect({ status: withKey.status, body: withKey.body }).toEqual({
      status: 400,
      body: { success: false, error: 'Malformed JSON body', page_id: P1 },
    });
  });
});

describe('a token that does not hold', () => {
  test("another persona's token is refused 401, whatever its scope", async () => {
    const from = freshAddress();
    const theirs = token('full', { persona: 'someone-else' });
    const r = await callFrom(from, 'GET', ops(P1, 'screenshot'), { bearer: theirs });
    expect({ status: r.status, body: r.body }).toEqual({
      status: 401,
      body: { detail: 'Invalid API key: the token is for another persona' },
    });
  });

  test('a token is refused within a second of its expiry', async () => {
    const from = freshAddress();
    // Time itself is tested: the token expires at the next whole second but one.
    const exp = Math.floor(Date.now() / 1000) + 2;
    const soon = token('read', { exp });
    const first = await callFrom(from, 'GET', ops(P1, 'network'), { bearer: soon });
    expect(first.status).toBe(200);
    let refused: Answer | null = null;
    while (Date.now() < exp * 1000 + 5_000) {
      const r = await callFrom(from, 'GET', ops(P1, 'network'), { bearer: soon });
      if (r.status !== 200) {
        refused = r;
        break;
      }
      await sleep(50);
    }
    const late = Date.now() - exp * 1000;
    expect({ status: refused?.status, body: refused?.body }).toEqual({
      status: 401,
      body: { detail: 'Invalid API key: the token has expired' },
    });
    expect(late).toBeGreaterThanOrEqual(-50);
    expect(late).toBeLessThan(1_000);
  });

  test('a token revoked by the push of the waker is refused at once', async () => {
    const from = freshAddress();
    const c = claims('read', { label: 'to be revoked' });
    const doomed = signer.sign(c);
    expect((await callFrom(from, 'GET', ops(P1, 'network'), { bearer: doomed })).status).toBe(200);
    // Only the service key may push: a token must not be able to lift its own revocation.
    const byToken = await callFrom(from, 'POST', '/api/v1/system/revoked-tokens', {
      bearer: token('full'),
      body: { ids: [] },
    });
    expect(byToken.status).toBe(403);
    const push = await w.call('POST', '/api/v1/system/revoked-tokens', {
      body: { ids: [c.id, newTokenId(), c.id] },
    });
    expect({ status: push.status, body: push.body }).toEqual({
      status: 200,
      body: { success: true, page_id: null, revoked: 2 },
    });
    const after = await callFrom(from, 'GET', ops(P1, 'network'), { bearer: doomed });
    expect({ status: after.status, body: after.body }).toEqual({
      status: 401,
      body: { detail: 'Invalid API key: the token was revoked' },
    });
    // The next push replaces the list whole: a token left out of it is taken again.
    await w.call('POST', '/api/v1/system/revoked-tokens', { body: { ids: [] } });
    expect((await callFrom(from, 'GET', ops(P1, 'network'), { bearer: doomed })).status).toBe(200);
  });

  test('the push takes at most 10,000 short ids', async () => {
    const ids = (n: number, len = 20): string[] =>
      Array.from({ length: n }, (_, i) => `tok_${String(i).padStart(len - 4, '0')}`);
    const most = await w.call('POST', '/api/v1/system/revoked-tokens', {
      body: { ids: ids(10_000) },
    });
    expect(most.body).toMatchObject({ success: true, revoked: 10_000 });
    for (const body of [{ ids: ids(10_001) }, { ids: ids(1, 65) }, { ids: [''] }, {}]) {
      const r = await w.call('POST', '/api/v1/system/revoked-tokens', { body });
      expect(r.status).toBe(400);
    }
    await w.call('POST', '/api/v1/system/revoked-tokens', { body: { ids: [] } });
  });
});

describe('DevTools discovery and MCP take the same tokens', () => {
  test('a `full` token opens /json/version and /mcp', async () => {
    const full = token('full');
    const from = freshAddress();
    const version = await callFrom(from, 'GET', '/json/version', { bearer: full });
    expect(version.status).toBe(200);
    expect(version.body.webSocketDebuggerUrl).toEqual(expect.stringContaining('/devtools/'));
    const agent = await connectAgent(`${w.url}/mcp`, full);
    try {
      const { tools } = await agent.client.listTools();
      expect(tools.map((t) => t.name)).toContain('navigate');
    } finally {
      await agent.client.close();
    }
  });

  test("a `read` token gets 403 there, another persona's token 401", async () => {
    const initialize = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 't' } },
    };
    const seen: string[] = [];
    const from = freshAddress();
    for (const [who, bearer] of [
      ['read', token('read')],
      ['other persona', token('full', { persona: 'someone-else' })],
    ] as const) {
      const version = await callFrom(from, 'GET', '/json/version', { bearer });
      const mcp = await callFrom(from, 'POST', '/mcp', { bearer, body: initialize });
      seen.push(`${who}: json/version ${version.status}, mcp ${mcp.status}`);
      expect(mcp.body).toHaveProperty('detail');
    }
    expect(seen).toEqual([
      'read: json/version 403, mcp 403',
      'other persona: json/version 401, mcp 401',
    ]);
  });
});

describe('an address that keeps failing', () => {
  test('meets 429 with Retry-After, while the right credential is still served', async () => {
    const from = freshAddress();
    for (let i = 0; i < FAILURES_PER_MINUTE; i++) {
      const r = await callFrom(from, 'GET', ops(P1, 'screenshot'), { bearer: `wrong-${i}` });
      expect(r.status).toBe(401);
    }
    const held = await callFrom(from, 'GET', ops(P1, 'screenshot'), { bearer: 'wrong-again' });
    expect(held.status).toBe(429);
    expect(held.body.detail).toMatch(/^Too many failed attempts from this address/);
    const retry = Number(held.headers['retry-after']);
    expect(retry).toBeGreaterThanOrEqual(1);
    expect(retry).toBeLessThanOrEqual(60);
    // No credential at all is held back alike, on every door.
    expect((await callFrom(from, 'GET', ops(P1, 'screenshot'))).status).toBe(429);
    const doors: Array<[string, string]> = [
      ['GET', '/json/version'],
      ['POST', '/mcp'],
    ];
    for (const [method, route] of doors) {
      const door = await callFrom(from, method, route, { body: {} });
      expect({ route, status: door.status, retry: door.headers['retry-after'] }).toEqual({
        route,
        status: 429,
        retry: expect.stringMatching(/^[1-9]\d*$/),
      });
    }
    // The right key, and a right token, from the very same address are served.
    expect((await callFrom(from, 'GET', ops(P1, 'screenshot'), { bearer: KEY })).status).toBe(200);
    const read = token('read');
    expect((await callFrom(from, 'GET', ops(P1, 'network'), { bearer: read })).status).toBe(200);
    // Another address is not held back for this one's failures.
    const other = await callFrom(freshAddress(), 'GET', ops(P1, 'screenshot'), { bearer: 'x' });
    expect(other.status).toBe(401);
  });
});

describe('what is counted and logged', () => {
  test('/metrics counts refusals by reason', async () => {
    const before = await refusals();
    const expired = token('read', { exp: Math.floor(Date.now() / 1000) - 1 });
    const c = claims('read');
    await w.call('POST', '/api/v1/system/revoked-tokens', { body: { ids: [c.id] } });
    const attempts: Array<[RefusalReason, string | undefined, string]> = [
      ['missing', undefined, ops(P1, 'screenshot')],
      ['invalid', 'not-the-key', ops(P1, 'screenshot')],
      ['expired', expired, ops(P1, 'screenshot')],
      ['revoked', signer.sign(c), ops(P1, 'screenshot')],
      ['persona', token('read', { persona: 'someone-else' }), ops(P1, 'screenshot')],
      ['scope', token('read'), '/api/v1/system/update'],
      ['page', token('read', { page_id: P2 }), ops(P1, 'screenshot')],
    ];
    for (const [, bearer, route] of attempts) {
      await callFrom(freshAddress(), 'GET', route, { bearer });
    }
    // And a burst from one address, past its limit.
    const from = freshAddress();
    for (let i = 0; i <= FAILURES_PER_MINUTE; i++) {
      await callFrom(from, 'GET', ops(P1, 'screenshot'), { bearer: 'nope' });
    }
    const after = await refusals();
    const delta = Object.fromEntries(REFUSAL_REASONS.map((r) => [r, after[r] - before[r]]));
    expect(delta).toEqual({
      missing: 1,
      invalid: 1 + FAILURES_PER_MINUTE,
      expired: 1,
      revoked: 1,
      persona: 1,
      scope: 1,
      page: 1,
      throttled: 1,
      unconfigured: 0,
    });
    await w.call('POST', '/api/v1/system/revoked-tokens', { body: { ids: [] } });
  });

  test("the request log's rows name the key, the token's id and its label", async () => {
    const rows = (): LogRow[] => readLogRows(w.dataDir);
    const before = rows().length;
    const c = claims('read', { label: 'kitchen dashboard, "wall"\nscreen' });
    const byToken = signer.sign(c);
    const from = freshAddress();
    const calls: Array<[string, string, string]> = [
      [KEY, 'GET', ops(P1, 'network')],
      [byToken, 'GET', ops(P1, 'network')],
      // Refused (a `read` token does not navigate): still logged as made by that token.
      [byToken, 'POST', ops(P1, 'navigate')],
      ['not-the-key', 'GET', ops(P1, 'network')],
    ];
    for (const [bearer, method, route] of calls) {
      await callFrom(from, method, route, { bearer, body: method === 'POST' ? {} : undefined });
    }
    const fresh = (): LogRow[] => rows().slice(before);
    const until = Date.now() + 5_000;
    while (fresh().filter((r) => r.event === 'end').length < calls.length) {
      if (Date.now() > until) throw new Error('the end rows of the calls did not come');
      await sleep(50);
    }
    const label = 'kitchen dashboard, "wall" screen';
    expect(fresh().map((r) => [r.event, r.path, r.status, r.credential, r.label])).toEqual([
      ['start', ops(P1, 'network'), '', 'key', ''],
      ['end', ops(P1, 'network'), '200', 'key', ''],
      ['start', ops(P1, 'network'), '', c.id, label],
      ['end', ops(P1, 'network'), '200', c.id, label],
      ['start', ops(P1, 'navigate'), '', c.id, label],
      ['end', ops(P1, 'navigate'), '403', c.id, label],
      ['start', ops(P1, 'network'), '', '', ''],
      ['end', ops(P1, 'network'), '401', '', ''],
    ]);
    // No secret in the log: neither the key nor any part of a token.
    const folder = path.join(w.dataDir, 'requests');
    const text = fs
      .readdirSync(folder)
      .map((f) => fs.readFileSync(path.join(folder, f), 'utf8'))
      .join('');
    expect(text).not.toContain(KEY);
    expect(text).not.toContain(byToken.split('.')[1]);
    expect(text).not.toContain('pbt_');
  });
});
