import net from 'node:net';
import type { NetworkFixture } from './helpers/network-fixture';
import {
  BIG_BODY,
  BIG_BODY_LENGTH,
  FIXTURE_HEADER,
  FORM_ECHO_PREFIX,
  JSON_BODY,
  PNG,
  TEXT_BODY,
  WS_BINARY,
  WS_TEXT,
  startNetworkFixture,
} from './helpers/network-fixture';
import type { RunningWorker } from './helpers/worker';
import { startWorker } from './helpers/worker';

/**
 * GET /api/v1/ops/{page_id}/network against the real worker and a headed Chromium, on the
 * loopback fixture of network-fixture.ts: every field is compared with what the fixture served.
 */

let w: RunningWorker;
let site: NetworkFixture;
type Body = Record<string, any>;

const HTTP_FIELDS = [
  'seq',
  'ts',
  'kind',
  'method',
  'url',
  'resource_type',
  'status',
  'content_type',
  'headers',
  'body_length',
  'body_truncated',
  'error',
].sort();
const WS_FIELDS = ['seq', 'ts', 'kind', 'url', 'binary', 'payload_length'].sort();
const BODY_LIMIT = 2_000_000;

beforeAll(async () => {
  site = await startNetworkFixture();
  w = await startWorker();
  await w.waitInitialized();
});
afterAll(async () => {
  await w?.stop();
  await site?.close();
});

async function createPage(id: string): Promise<void> {
  const r = await w.call<Body>('POST', '/api/v1/ops/create-page', { body: { page_id: id } });
  expect(r.status).toBe(200);
}

async function destroyPage(id: string, lease?: string): Promise<void> {
  await w.call('DELETE', `/api/v1/ops/${id}/destroy-page`, { lease });
}

async function navigate(id: string, path: string): Promise<Body> {
  const r = await w.call<Body>('POST', `/api/v1/ops/${id}/navigate`, {
    body: { url: site.url + path },
  });
  expect(r.status).toBe(200);
  expect(r.body.success).toBe(true);
  return r.body;
}

function network(id: string, query = '', lease?: string) {
  return w.call<Body>('GET', `/api/v1/ops/${id}/network${query ? `?${query}` : ''}`, { lease });
}

/** Polls the capture (with bodies) until `done` holds; the last reply otherwise fails the test. */
async function waitFor(id: string, done: (b: Body) => boolean, timeoutMs = 20_000): Promise<Body> {
  const until = Date.now() + timeoutMs;
  let last: Body = {};
  while (Date.now() < until) {
    const r = await network(id, 'include_body=true');
    expect(r.status).toBe(200);
    last = r.body;
    if (done(last)) return last;
    await new Promise((res) => setTimeout(res, 150));
  }
  throw new Error(
    `capture never reached the expected state: ${JSON.stringify(last).slice(0, 2000)}`,
  );
}

const byUrl = (b: Body, path: string): Body[] =>
  (b.http as Body[]).filter((l) => l.url === site.url + path);
const one = (b: Body, path: string, kind = 'response'): Body => {
  const found = byUrl(b, path).filter((l) => l.kind === kind);
  expect(found).toHaveLength(1);
  return found[0] as Body;
};
const served = (path: string) => {
  const s = site.served.get(path);
  if (!s) throw new Error(`the fixture never served ${path}`);
  return s;
};
const allSeqs = (b: Body): number[] => [
  ...(b.http as Body[]).map((l) => l.seq as number),
  ...(b.websocket as Body[]).map((l) => l.seq as number),
];
const increasing = (xs: number[]): boolean =>
  xs.every((x, i) => i === 0 || x > (xs[i - 1] as number));

describe('HTTP lines of a page load', () => {
  const id = 'net-app';
  let full: Body;
  let startedAt: number;

  beforeAll(async () => {
    await createPage(id);
    startedAt = Date.now() / 1000;
    await navigate(id, '/app');
    full = await waitFor(id, (b) => byUrl(b, '/api/echo').length > 0);
  });
  afterAll(() => destroyPage(id));

  test('the reply: success, page id, page URL, mark, blacklist and both lists', () => {
    expect(Object.keys(full).sort()).toEqual(
      ['success', 'page_id', 'url', 'mark', 'blacklist', 'http', 'websocket'].sort(),
    );
    expect(full).toMatchObject({ success: true, page_id: id, url: `${site.url}/app` });
    expect(full.blacklist).toEqual([]);
    expect(full.websocket).toEqual([]);
    expect(full.mark).toBe(Math.max(...allSeqs(full)));
  });

  test('every line has every field, seq strictly increases, ts is epoch seconds of this run', () => {
    const lines = full.http as Body[];
    expect(lines.length).toBeGreaterThanOrEqual(9);
    for (const l of lines) {
      expect(Object.keys(l).sort()).toEqual([...HTTP_FIELDS, 'body'].sort());
      expect(l.ts).toBeGreaterThanOrEqual(startedAt - 1);
      expect(l.ts).toBeLessThanOrEqual(Date.now() / 1000 + 1);
      for (const v of Object.values(l.headers as Body)) expect(typeof v).toBe('string');
    }
    expect(increasing(lines.map((l) => l.seq as number))).toBe(true);
    // Only documents, XHR and fetch: the page's image and stylesheet are not lines.
    expect(new Set(lines.map((l) => l.resource_type))).toEqual(
      new Set(['document', 'xhr', 'fetch']),
    );
    expect(lines.some((l) => /as=img|style\.css/.test(l.url as string))).toBe(false);
  });

  test('the navigation line: URL, method, the document status and content type', () => {
    const nav = one(full, '/app', 'navigation');
    expect(nav).toEqual({
      seq: expect.any(Number),
      ts: expect.any(Number),
      kind: 'navigation',
      method: 'GET',
      url: `${site.url}/app`,
      resource_type: 'document',
      status: 200,
      content_type: 'text/html; charset=utf-8',
      headers: {},
      body: null,
      body_length: 0,
      body_truncated: false,
      error: null,
    });
    expect((full.http as Body[])[0]).toEqual(nav);
  });

  test('the document response survives the emptying of its own load, with its body', () => {
    const doc = one(full, '/app');
    const s = served('/app');
    expect(doc).toMatchObject({
      method: 'GET',
      resource_type: 'document',
      status: 200,
      content_type: 'text/html; charset=utf-8',
      body: s.body.toString('utf8'),
      body_length: s.body.toString('utf8').length,
      body_truncated: false,
      error: null,
    });
    expect(doc.headers['content-length']).toBe(s.headers['content-length']);
  });

  test('fetch of JSON: body, length in characters, status, content type and headers as served', () => {
    const line = one(full, '/api/data.json');
    expect(line).toMatchObject({
      kind: 'response',
      method: 'GET',
      resource_type: 'fetch',
      status: 200,
      content_type: 'application/json; charset=utf-8',
      body: JSON_BODY,
      body_length: JSON_BODY.length,
      body_truncated: false,
      error: null,
    });
    const s = served('/api/data.json');
    for (const [k, v] of Object.entries(s.headers)) expect(line.headers[k]).toBe(v);
    expect(line.headers[FIXTURE_HEADER]).toBe('/api/data.json');
  });

  test('XHR of text has resource_type xhr and its exact body', () => {
    expect(one(full, '/api/text')).toMatchObject({
      resource_type: 'xhr',
      status: 200,
      content_type: 'text/plain; charset=utf-8',
      body: TEXT_BODY,
      body_length: TEXT_BODY.length,
      error: null,
    });
  });

  test('a redirect: the 302 hop is a line with error set and no body, then the target', () => {
    const hop = one(full, '/api/redirect');
    expect(hop).toMatchObject({
      method: 'GET',
      resource_type: 'fetch',
      status: 302,
      body: null,
      body_truncated: false,
    });
    expect(hop.error).toMatch(/redirect/);
    expect(hop.headers.location).toBe('/api/target');
    const target = one(full, '/api/target');
    expect(target).toMatchObject({ status: 200, body: '{"redirected":true}', error: null });
    expect(target.seq).toBeGreaterThan(hop.seq);
  });

  test('a body over 2,000,000 characters is cut there, with body_truncated and the full length', () => {
    const line = one(full, '/api/big');
    expect(BIG_BODY.length).toBe(BIG_BODY_LENGTH);
    expect(line.body_truncated).toBe(true);
    expect(line.body_length).toBe(BIG_BODY_LENGTH);
    expect((line.body as string).length).toBe(BODY_LIMIT);
    expect(line.body).toBe(BIG_BODY.slice(0, BODY_LIMIT));
    expect(line.error).toBeNull();
  });

  test('a binary (PNG) body is null, with its length in bytes', () => {
    expect(one(full, '/api/image.png')).toMatchObject({
      status: 200,
      content_type: 'image/png',
      body: null,
      body_length: PNG.length,
      body_truncated: false,
      error: null,
    });
  });

  test('a POST answered with form data: method POST, text body', () => {
    expect(one(full, '/api/echo')).toMatchObject({
      method: 'POST',
      content_type: 'application/x-www-form-urlencoded',
      body: `${FORM_ECHO_PREFIX}a=1&b=two`,
    });
  });

  test('without include_body (default, false or 0) the body field is left out; 1 and true add it', async () => {
    for (const q of ['', 'include_body=false', 'include_body=0']) {
      const r = await network(id, q);
      expect(r.status).toBe(200);
      expect(r.body.mark).toBe(full.mark);
      const lines = r.body.http as Body[];
      expect(lines.map((l) => l.seq)).toEqual((full.http as Body[]).map((l) => l.seq));
      for (const l of lines) expect(Object.keys(l).sort()).toEqual(HTTP_FIELDS);
      // Everything but the body is the same as with bodies.
      expect(lines).toEqual(
        (full.http as Body[]).map((l) => {
          const rest = { ...l };
          delete rest.body;
          return rest;
        }),
      );
    }
    for (const q of ['include_body=1', 'include_body=true']) {
      const r = await network(id, `${q}&url_contains=data.json`);
      expect((r.body.http as Body[])[0]?.body).toBe(JSON_BODY);
    }
  });

  test('mark and since: lines after since only; mark stays the highest seq even when filtered out', async () => {
    const seqs = (full.http as Body[]).map((l) => l.seq as number);
    const mid = seqs[3] as number;
    const after = await network(id, `since=${mid}`);
    expect((after.body.http as Body[]).map((l) => l.seq)).toEqual(seqs.filter((s) => s > mid));
    const none = await network(id, `since=${full.mark}`);
    expect(none.body).toMatchObject({ mark: full.mark, http: [], websocket: [] });
    const filtered = await network(id, 'url_contains=no-such-url');
    expect(filtered.body).toMatchObject({ mark: full.mark, http: [], websocket: [] });
  });

  test('url_contains and resource_type filter the HTTP list', async () => {
    const api = await network(id, 'url_contains=/api/');
    const urls = (api.body.http as Body[]).map((l) => l.url as string);
    expect(urls.length).toBe(7);
    for (const u of urls) expect(u).toContain('/api/');
    const xhr = await network(id, 'resource_type=xhr');
    expect((xhr.body.http as Body[]).map((l) => l.url)).toEqual([`${site.url}/api/text`]);
    const docs = await network(id, 'resource_type=document');
    expect((docs.body.http as Body[]).map((l) => [l.kind, l.url])).toEqual([
      ['navigation', `${site.url}/app`],
      ['response', `${site.url}/app`],
    ]);
    const both = await network(id, 'resource_type=fetch&url_contains=redirect');
    expect((both.body.http as Body[]).map((l) => l.status)).toEqual([302]);
  });

  test('bad queries are 400 with the error envelope', async () => {
    for (const q of [
      'since=-1',
      'since=abc',
      'since=1.5',
      'resource_type=image',
      'include_body=maybe',
    ]) {
      const r = await network(id, q);
      expect([q, r.status]).toEqual([q, 400]);
      expect(r.body).toMatchObject({ success: false, page_id: id, error: expect.any(String) });
    }
  });
});

describe('full loads and single-page-app changes', () => {
  const id = 'net-loads';
  beforeAll(() => createPage(id));
  afterAll(() => destroyPage(id));

  test('navigating again empties both lists and seq goes on from where it was', async () => {
    await navigate(id, '/ws');
    const first = await waitFor(id, (b) => (b.websocket as Body[]).some((l) => l.kind === 'close'));
    expect((first.websocket as Body[]).length).toBeGreaterThan(0);
    await navigate(id, '/second-doc');
    const second = await waitFor(id, (b) => byUrl(b, '/second-doc').length === 2);
    expect(second.websocket).toEqual([]);
    expect((second.http as Body[]).map((l) => [l.kind, l.url])).toEqual([
      ['navigation', `${site.url}/second-doc`],
      ['response', `${site.url}/second-doc`],
    ]);
    expect(Math.min(...allSeqs(second))).toBeGreaterThan(first.mark);
    expect(second.mark).toBeGreaterThan(first.mark);
  });

  test('a navigation through a redirect keeps its 302 hop (with error) in the new lists', async () => {
    const before = (await network(id)).body.mark as number;
    const nav = await navigate(id, '/doc-redirect');
    expect(nav.final_url).toBe(`${site.url}/second-doc`);
    const b = await waitFor(id, (x) => byUrl(x, '/second-doc').length === 2);
    const lines = b.http as Body[];
    expect(lines.map((l) => [l.kind, l.url, l.status])).toEqual([
      ['response', `${site.url}/doc-redirect`, 302],
      ['navigation', `${site.url}/second-doc`, 200],
      ['response', `${site.url}/second-doc`, 200],
    ]);
    expect(lines[0]).toMatchObject({ resource_type: 'document', body: null });
    expect(lines[0]?.error).toMatch(/redirect/);
    expect(lines[0]?.headers.location).toBe('/second-doc');
    expect(Math.min(...allSeqs(b))).toBeGreaterThan(before);
  });

  test('a link that loads a new document is a full load too', async () => {
    await navigate(id, '/link');
    const onLink = await waitFor(id, (b) => byUrl(b, '/link').length === 2);
    const click = await w.call<Body>('POST', `/api/v1/primitive/${id}/click-element`, {
      body: { selector: '#next' },
    });
    expect(click.body.success).toBe(true);
    const b = await waitFor(id, (x) => byUrl(x, '/second-doc').length === 2);
    expect(byUrl(b, '/link')).toEqual([]);
    expect(one(b, '/second-doc', 'navigation')).toMatchObject({ method: 'GET', status: 200 });
    expect(Math.min(...allSeqs(b))).toBeGreaterThan(onLink.mark);
  });

  test('reload-page is a full load: the lists restart with the same document', async () => {
    const before = (await network(id)).body;
    const r = await w.call<Body>('POST', `/api/v1/primitive/${id}/reload-page`);
    expect(r.body.success).toBe(true);
    const b = await waitFor(
      id,
      (x) => (x.mark as number) > (before.mark as number) && byUrl(x, '/second-doc').length === 2,
    );
    expect((b.http as Body[]).map((l) => l.kind)).toEqual(['navigation', 'response']);
    expect(Math.min(...allSeqs(b))).toBeGreaterThan(before.mark as number);
  });

  test('a navigation that fails: a line with status 0 and the error, then the error page', async () => {
    const srv = net.createServer();
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
    const { port } = srv.address() as net.AddressInfo;
    await new Promise((r) => srv.close(r));
    const url = `http://127.0.0.1:${port}/nothing`;
    const before = (await network(id)).body.mark as number;
    const r = await w.call<Body>('POST', `/api/v1/ops/${id}/navigate`, { body: { url } });
    expect(r.body.success).toBe(false);
    const b = await waitFor(id, (x) =>
      (x.http as Body[]).some((l) => l.kind === 'navigation' && l.url === url),
    );
    const lines = b.http as Body[];
    expect(lines[0]).toMatchObject({
      kind: 'response',
      method: 'GET',
      url,
      resource_type: 'document',
      status: 0,
      content_type: null,
      headers: {},
      body: null,
      body_length: 0,
    });
    expect(lines[0]?.error).toMatch(/ERR_CONNECTION_REFUSED/);
    expect(lines.find((l) => l.kind === 'navigation')).toMatchObject({
      url,
      method: 'GET',
      status: null,
    });
    expect(Math.min(...allSeqs(b))).toBeGreaterThan(before);
  });

  test('history.pushState, a hash change and replaceState only add navigation lines', async () => {
    await navigate(id, '/spa');
    const b = await waitFor(
      id,
      (x) => (x.http as Body[]).filter((l) => l.kind === 'navigation').length === 4,
    );
    const lines = b.http as Body[];
    expect(lines.map((l) => [l.kind, l.url])).toEqual([
      ['navigation', `${site.url}/spa`],
      ['response', `${site.url}/spa`],
      ['response', `${site.url}/api/data.json?spa`],
      ['navigation', `${site.url}/spa/list`],
      ['navigation', `${site.url}/spa/list#item-2`],
      ['navigation', `${site.url}/spa/final?x=1`],
    ]);
    for (const l of lines.slice(3)) {
      expect(l).toMatchObject({
        method: null,
        resource_type: 'document',
        status: null,
        content_type: null,
        headers: {},
        body: null,
        body_length: 0,
        error: null,
      });
    }
    expect(lines[0]).toMatchObject({ method: 'GET', status: 200 });
    expect(b.url).toBe(`${site.url}/spa/final?x=1`);
    expect(increasing(lines.map((l) => l.seq as number))).toBe(true);
  });
});

describe('WebSocket lines', () => {
  const id = 'net-ws';
  beforeAll(() => createPage(id));
  afterAll(() => destroyPage(id));

  test('open, sent and received text and binary, close: payloads as exchanged with the server', async () => {
    const receivedBefore = site.ws.received.length;
    await navigate(id, '/ws');
    const b = await waitFor(id, (x) => (x.websocket as Body[]).some((l) => l.kind === 'close'));
    const lines = b.websocket as Body[];
    const socket = `${site.wsUrl}/socket`;
    for (const l of lines) {
      expect(Object.keys(l).sort()).toEqual([...WS_FIELDS, 'payload'].sort());
      expect(l.url).toBe(socket);
    }
    const binary = Buffer.from(WS_BINARY);
    const reversed = Buffer.from(WS_BINARY).reverse();
    const view = lines.map(({ kind, payload, binary: bin, payload_length }) => ({
      kind,
      payload,
      binary: bin,
      payload_length,
    }));
    const sentText = {
      kind: 'sent',
      payload: WS_TEXT,
      binary: false,
      payload_length: WS_TEXT.length,
    };
    const sentBinary = {
      kind: 'sent',
      payload: binary.toString('base64'),
      binary: true,
      payload_length: binary.length,
    };
    const gotText = {
      kind: 'received',
      payload: `echo:${WS_TEXT}`,
      binary: false,
      payload_length: WS_TEXT.length + 5,
    };
    const gotBinary = {
      kind: 'received',
      payload: reversed.toString('base64'),
      binary: true,
      payload_length: binary.length,
    };
    expect(view).toHaveLength(6);
    expect(view[0]).toEqual({ kind: 'open', payload: null, binary: false, payload_length: 0 });
    expect(view[5]).toEqual({ kind: 'close', payload: null, binary: false, payload_length: 0 });
    // The four messages, each echo after what it answers (their interleaving is the network's).
    const middle = view.slice(1, 5);
    expect(middle).toEqual(expect.arrayContaining([sentText, sentBinary, gotText, gotBinary]));
    const at = (x: object): number =>
      middle.findIndex((m) => JSON.stringify(m) === JSON.stringify(x));
    expect(at(sentText)).toBeLessThan(at(gotText));
    expect(at(sentBinary)).toBeLessThan(at(gotBinary));
    expect(at(sentText)).toBeLessThan(at(sentBinary));
    // What the lines say was sent is what the server got, and the other way round.
    const got = site.ws.received.slice(receivedBefore);
    expect(got.map((m) => [m.opcode, m.data.toString('base64')])).toEqual([
      [1, Buffer.from(WS_TEXT).toString('base64')],
      [2, binary.toString('base64')],
    ]);
    const seqs = lines.map((l) => l.seq as number);
    expect(increasing(seqs)).toBe(true);
    // One seq for both lists: no number is used twice, and the document lines sit among them.
    const every = allSeqs(b);
    expect(new Set(every).size).toBe(every.length);
    expect(b.mark).toBe(Math.max(...every));
    const nav = one(b, '/ws', 'navigation');
    expect(nav.seq).toBeLessThan(seqs[0] as number);
    // Without include_body the payload field is left out.
    const bare = await network(id);
    for (const l of bare.body.websocket as Body[]) expect(Object.keys(l).sort()).toEqual(WS_FIELDS);
    // resource_type filters HTTP lines only; url_contains filters both lists.
    const typed = await network(id, 'resource_type=xhr');
    expect(typed.body.http).toEqual([]);
    expect((typed.body.websocket as Body[]).length).toBe(lines.length);
    const byUrlFilter = await network(id, 'url_contains=/socket');
    expect(byUrlFilter.body.http).toEqual([]);
    expect((byUrlFilter.body.websocket as Body[]).length).toBe(lines.length);
  });

  test('a protocol error on the socket is an error line carrying the message, then close', async () => {
    await navigate(id, '/ws-bad');
    const b = await waitFor(id, (x) => (x.websocket as Body[]).some((l) => l.kind === 'close'));
    const lines = b.websocket as Body[];
    expect(lines.map((l) => l.kind)).toEqual(['open', 'error', 'close']);
    expect(lines[1]?.payload).toMatch(/reserved/i);
    expect(lines[1]?.payload_length).toBe((lines[1]?.payload as string).length);
    expect(lines[1]?.url).toBe(`${site.wsUrl}/socket?bad=1`);
  });
});

describe('passive, and behind the same gates as every ops call', () => {
  test('the capture answers while a navigation holds the page lock', async () => {
    const id = 'net-busy';
    await createPage(id);
    await navigate(id, '/second-doc');
    const started = Date.now();
    let navDone = 0;
    const nav = w
      .call<Body>('POST', `/api/v1/ops/${id}/navigate`, {
        body: { url: `${site.url}/slow?ms=5000` },
      })
      .then((r) => {
        navDone = Date.now();
        return r;
      });
    // The navigation holds the lock from its first moment (its ~2 s pause, then the load).
    const until = Date.now() + 5_000;
    for (;;) {
      const pages = await w.call<Body>('GET', '/api/v1/system/status/pages', { auth: false });
      const entry = (pages.body.pages as Body[]).find((p) => p.page_id === id);
      if (entry?.current_operation === 'navigate') break;
      if (Date.now() > until) throw new Error('the navigation never started');
      await new Promise((r) => setTimeout(r, 50));
    }
    const r = await network(id);
    const answered = Date.now();
    expect(r.status).toBe(200);
    expect(r.body.success).toBe(true);
    expect(navDone).toBe(0);
    const navResult = await nav;
    expect(navResult.status).toBe(200);
    expect(r.ms * 4).toBeLessThan(navDone - started);
    expect(answered).toBeLessThan(navDone);
    await destroyPage(id);
  });

  test('a page leased by another client gives 423; the holder reads it', async () => {
    const id = 'net-lease';
    await createPage(id);
    const lease = await w.call<Body>('POST', `/api/v1/ops/${id}/lease`, { body: {} });
    const token = lease.body.lease_token as string;
    const other = await network(id);
    expect(other.status).toBe(423);
    expect(other.body).toMatchObject({ success: false, page_id: id });
    const wrong = await network(id, '', 'not-the-token');
    expect(wrong.status).toBe(423);
    const holder = await network(id, '', token);
    expect(holder.status).toBe(200);
    expect(holder.body).toMatchObject({ success: true, page_id: id, url: 'about:blank' });
    await destroyPage(id, token);
  });

  test('an unknown page is 404 Page not found; no token is 401', async () => {
    const r = await network('no-such-page');
    expect(r.status).toBe(404);
    expect(r.body).toEqual({ success: false, page_id: 'no-such-page', error: 'Page not found' });
    const anon = await w.call<Body>('GET', '/api/v1/ops/no-such-page/network', { auth: false });
    expect(anon.status).toBe(401);
  });

  test('a new page starts with empty lists and mark 0', async () => {
    const id = 'net-new';
    await createPage(id);
    const r = await network(id);
    expect(r.body).toEqual({
      success: true,
      page_id: id,
      url: 'about:blank',
      mark: 0,
      blacklist: [],
      http: [],
      websocket: [],
    });
    await destroyPage(id);
  });
});
