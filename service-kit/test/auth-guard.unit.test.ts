import type { AccessNeed, Credential, Presented, RefusalReason, TokenClaims } from '../src';
import { AuthGuard, AuthRefusal, TokenSigner, accessOf, newTokenId, tokenHash } from '../src';

const KEY = 'guard-test-service-key';

function claims(over: Partial<TokenClaims> = {}): TokenClaims {
  return {
    id: newTokenId(),
    persona: 'alice',
    scope: 'full',
    page_id: null,
    label: null,
    exp: Math.floor(Date.now() / 1000) + 3600,
    ...over,
  };
}

const bearer = (value: string, address = '10.0.0.1'): Presented => ({
  authorization: `Bearer ${value}`,
  address,
});

/** The refusal a check throws, as {status, reason}; null when it passes. */
function refusal(
  guard: AuthGuard,
  req: Presented,
  need: AccessNeed,
  persona: string | null = 'alice',
): { status: number; reason: RefusalReason; detail: string } | null {
  try {
    guard.check(req, need, persona);
    return null;
  } catch (err) {
    if (!(err instanceof AuthRefusal)) throw err;
    return { status: err.status, reason: err.reason, detail: err.detail };
  }
}

describe('accessOf: what a request to a persona needs', () => {
  test.each([
    ['GET', '/api/v1/system/ping', 'status', null],
    ['GET', '/api/v1/system/status', 'status', null],
    ['GET', '/api/v1/system/status/pages', 'status', null],
    ['GET', '/api/v1/plugins', 'status', null],
    ['GET', '/api/v1/plugins/archive-check/docs', 'status', null],
    ['GET', '/openapi.json', 'status', null],
    ['GET', '/api/v1/openapi.json?x=1', 'status', null],
    ['GET', '/', 'static', null],
    ['GET', '/docs', 'static', null],
    ['GET', '/vnc/', 'static', null],
    ['GET', '/ui/base.css', 'static', null],
    ['POST', '/api/v1/system/ping', 'full', null],
    ['GET', '/api/v1/system/update', 'key', null],
    ['GET', '/api/v1/system/metrics', 'key', null],
    ['GET', '/api/v1/system/start', 'full', null],
    ['POST', '/api/v1/ops/create-page', 'full', null],
    ['POST', '/api/v1/ops/p1/navigate', 'full', 'p1'],
    ['POST', '/api/v1/ops/p1/extract-content', 'read', 'p1'],
    ['GET', '/api/v1/ops/p%2F2/screenshot?full=true', 'read', 'p/2'],
    ['GET', '/api/v1/ops/p1/network', 'read', 'p1'],
    ['GET', '/api/v1/ops/p1/snapshot', 'read', 'p1'],
    ['POST', '/api/v1/ops/p1/screenshot', 'full', 'p1'],
    ['POST', '/api/v1/primitive/p1/click-element', 'full', 'p1'],
    ['POST', '/api/v1/p1/plugin/archive/check', 'full', 'p1'],
    ['GET', '/api/v1/media/abc', 'full', null],
    ['GET', '/api/v1/recordings', 'full', null],
    ['GET', '/metrics', 'full', null],
    ['POST', '/mcp', 'full', null],
    ['GET', '/json/version', 'full', null],
    ['GET', '/devtools/browser/x', 'full', null],
    ['POST', '/vnc/session', 'live', null],
    ['GET', '/vnc/websockify', 'live', null],
    ['POST', '/vnc/control', 'live', null],
    ['DELETE', '/', 'full', null],
    // Express matches any case: so does the classification (page ids keep theirs).
    ['GET', '/API/V1/SYSTEM/UPDATE', 'key', null],
    ['GET', '/Api/v1/Ops/PageOne/Screenshot', 'read', 'PageOne'],
    ['POST', '/MCP', 'full', null],
    ['GET', '/API/V1/SYSTEM/STATUS', 'status', null],
  ])('%s %s needs %s (page %s)', (method, url, access, pageId) => {
    expect(accessOf(method, url)).toMatchObject({ access, pageId });
  });
});

describe('TokenSigner', () => {
  const signer = new TokenSigner(KEY);

  test('a token it made verifies with its claims; any change to it does not', () => {
    const c = claims({ label: 'dashboard', page_id: 'p1', scope: 'live' });
    const token = signer.sign(c);
    expect(signer.verify(token)).toEqual({ ok: true, claims: c });
    const [body = '', sig = ''] = token.split('.');
    const forged = Buffer.from(JSON.stringify({ ...c, scope: 'full' })).toString('base64url');
    expect(signer.verify(`pbt_${forged}.${sig}`)).toEqual({ ok: false, fault: 'signature' });
    expect(signer.verify(`${body}.${sig.slice(0, -2)}AA`)).toEqual({
      ok: false,
      fault: 'signature',
    });
    expect(signer.verify('pbt_nonsense')).toEqual({ ok: false, fault: 'malformed' });
  });

  test('another service key makes tokens this one refuses', () => {
    const token = new TokenSigner('another-key').sign(claims());
    expect(signer.verify(token)).toEqual({ ok: false, fault: 'signature' });
  });

  test('a token is refused from its expiry on', () => {
    const exp = Math.floor(Date.now() / 1000) + 10;
    const token = signer.sign(claims({ exp }));
    expect(signer.verify(token, exp * 1000 - 1).ok).toBe(true);
    expect(signer.verify(token, exp * 1000)).toEqual({ ok: false, fault: 'expired' });
  });

  test('what is stored in place of a token does not give it back', () => {
    const token = signer.sign(claims());
    expect(tokenHash(token)).toMatch(/^[0-9a-f]{64}$/);
    expect(tokenHash(token)).not.toContain(token.slice(4, 20));
  });
});

describe('AuthGuard', () => {
  const signer = new TokenSigner(KEY);
  const navigate = accessOf('POST', '/api/v1/ops/p1/navigate');
  const screenshot = accessOf('GET', '/api/v1/ops/p1/screenshot');
  const otherPage = accessOf('GET', '/api/v1/ops/p2/screenshot');
  const live = accessOf('POST', '/vnc/session');
  const update = accessOf('GET', '/api/v1/system/update');
  const status = accessOf('GET', '/api/v1/system/status');

  test('the key opens every route; a public route needs nothing', () => {
    const guard = new AuthGuard({ serviceKey: KEY });
    for (const need of [navigate, screenshot, live, update]) {
      expect(guard.check(bearer(KEY), need, 'alice')).toEqual<Credential>({ kind: 'key' });
    }
    expect(guard.check({ authorization: undefined, address: 'x' }, status, 'alice')).toBeNull();
  });

  test('no key, a wrong key: 401 with the API’s body; no key configured: 500', () => {
    const guard = new AuthGuard({ serviceKey: KEY });
    expect(refusal(guard, { authorization: undefined, address: 'a' }, navigate)).toEqual({
      status: 401,
      reason: 'missing',
      detail: 'Invalid API key',
    });
    expect(refusal(guard, bearer('wrong'), navigate)).toMatchObject({
      status: 401,
      reason: 'invalid',
      detail: 'Invalid API key',
    });
    const bare = new AuthGuard({ serviceKey: null });
    expect(refusal(bare, bearer(KEY), navigate)).toMatchObject({
      status: 500,
      detail: 'Server not properly configured',
    });
  });

  test('each scope opens what it names and nothing else', () => {
    const guard = new AuthGuard({ serviceKey: KEY });
    const opens = (scope: TokenClaims['scope']): string[] =>
      Object.entries({ navigate, screenshot, live, update })
        .filter(([, need]) => refusal(guard, bearer(signer.sign(claims({ scope }))), need) === null)
        .map(([name]) => name);
    expect(opens('full')).toEqual(['navigate', 'screenshot', 'live']);
    expect(opens('read')).toEqual(['screenshot']);
    expect(opens('live')).toEqual(['live']);
    expect(refusal(guard, bearer(signer.sign(claims({ scope: 'read' }))), navigate)).toMatchObject({
      status: 403,
      reason: 'scope',
    });
  });

  test('a token opens nothing of another persona, and a page-limited one nothing of another page', () => {
    const guard = new AuthGuard({ serviceKey: KEY });
    const alices = signer.sign(claims());
    expect(refusal(guard, bearer(alices), navigate, 'bob')).toMatchObject({
      status: 401,
      reason: 'persona',
    });
    const onePage = signer.sign(claims({ scope: 'read', page_id: 'p1' }));
    expect(refusal(guard, bearer(onePage), screenshot)).toBeNull();
    expect(refusal(guard, bearer(onePage), otherPage)).toMatchObject({
      status: 403,
      reason: 'page',
    });
    expect(
      refusal(guard, bearer(onePage), accessOf('POST', '/api/v1/ops/create-page')),
    ).toMatchObject({ status: 403 });
  });

  test('a revoked token, or one another worker process made, is refused', () => {
    const revoked = new Set<string>();
    const guard = new AuthGuard({
      serviceKey: KEY,
      revoked: (id) => revoked.has(id),
      instance: 'i1',
    });
    const c = claims();
    const token = signer.sign(c);
    expect(refusal(guard, bearer(token), navigate)).toBeNull();
    revoked.add(c.id);
    expect(refusal(guard, bearer(token), navigate)).toMatchObject({
      status: 401,
      reason: 'revoked',
    });
    expect(refusal(guard, bearer(signer.sign(claims({ inst: 'i1' }))), navigate)).toBeNull();
    expect(refusal(guard, bearer(signer.sign(claims({ inst: 'i2' }))), navigate)).toMatchObject({
      status: 401,
    });
  });

  test('past the limit, wrong keys from one address meet 429 while the right key is served', () => {
    let now = 1_000_000;
    const refused: RefusalReason[] = [];
    const guard = new AuthGuard({
      serviceKey: KEY,
      failuresPerMinute: 5,
      now: () => now,
      onRefusal: (r) => refused.push(r),
    });
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++) {
      statuses.push(refusal(guard, bearer(`guess-${i}`, '10.9.9.9'), navigate)?.status ?? 200);
      now += 1000;
    }
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429, 429, 429]);
    // The right key from the same address, and wrong keys from another, are not held back.
    expect(refusal(guard, bearer(KEY, '10.9.9.9'), navigate)).toBeNull();
    expect(refusal(guard, bearer('guess', '10.1.1.1'), navigate)?.status).toBe(401);
    expect(refused.filter((r) => r === 'throttled')).toHaveLength(3);
    let retry: number | null = null;
    try {
      guard.check(bearer('again', '10.9.9.9'), navigate, 'alice');
    } catch (err) {
      retry = err instanceof AuthRefusal ? err.retryAfterS : null;
    }
    expect(retry).toBeGreaterThan(0);
    expect(retry).toBeLessThanOrEqual(60);
    // A minute without a try, and the address may try again.
    now += 61_000;
    expect(refusal(guard, bearer('late', '10.9.9.9'), navigate)?.status).toBe(401);
  });

  test('the throttle remembers a bounded number of addresses', () => {
    const guard = new AuthGuard({ serviceKey: KEY, failuresPerMinute: 3 });
    for (let i = 0; i < 10_500; i++) refusal(guard, bearer('x', `a${i}`), navigate);
    expect(guard.trackedAddresses).toBeLessThanOrEqual(10_000);
  });
});
