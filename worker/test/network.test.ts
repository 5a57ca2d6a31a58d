import type { Body } from '@persona-browser/testkit/network-api';
import {
  HTTP_FIELDS,
  BODY_LIMIT,
  allSeqs,
  increasing,
  useNetworkWorker,
} from '@persona-browser/testkit/network-api';
import {
  BIG_BODY,
  BIG_BODY_LENGTH,
  FIXTURE_HEADER,
  FORM_ECHO_PREFIX,
  JSON_BODY,
  PNG,
  TEXT_BODY,
} from '@persona-browser/testkit/network-fixture';

/**
 * GET /api/v1/ops/{page_id}/network against the real worker and a headed Chromium: every field of
 * the HTTP lines of one page load compared with what the fixture (network-fixture.ts) served.
 */

const { ctx, createPage, destroyPage, navigate, network, waitFor, byUrl, one, served } =
  useNetworkWorker();

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
    expect(full).toMatchObject({ success: true, page_id: id, url: `${ctx.site.url}/app` });
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
      url: `${ctx.site.url}/app`,
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
    expect((xhr.body.http as Body[]).map((l) => l.url)).toEqual([`${ctx.site.url}/api/text`]);
    const docs = await network(id, 'resource_type=document');
    expect((docs.body.http as Body[]).map((l) => [l.kind, l.url])).toEqual([
      ['navigation', `${ctx.site.url}/app`],
      ['response', `${ctx.site.url}/app`],
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
