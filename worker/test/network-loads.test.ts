import net from 'node:net';
import type { Body } from '@persona-browser/testkit/network-api';
import {
  WS_FIELDS,
  allSeqs,
  increasing,
  useNetworkWorker,
} from '@persona-browser/testkit/network-api';
import { WS_BINARY, WS_TEXT } from '@persona-browser/testkit/network-fixture';

/**
 * GET /api/v1/ops/{page_id}/network across loads: full loads empty the lists, single-page-app
 * changes only add a navigation line; WebSocket lines; and the capture's passivity and gates.
 */

const { ctx, createPage, destroyPage, navigate, network, waitFor, byUrl, one } = useNetworkWorker();

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
      ['navigation', `${ctx.site.url}/second-doc`],
      ['response', `${ctx.site.url}/second-doc`],
    ]);
    expect(Math.min(...allSeqs(second))).toBeGreaterThan(first.mark);
    expect(second.mark).toBeGreaterThan(first.mark);
  });

  test('a navigation through a redirect keeps its 302 hop (with error) in the new lists', async () => {
    const before = (await network(id)).body.mark as number;
    const nav = await navigate(id, '/doc-redirect');
    expect(nav.final_url).toBe(`${ctx.site.url}/second-doc`);
    const b = await waitFor(id, (x) => byUrl(x, '/second-doc').length === 2);
    const lines = b.http as Body[];
    expect(lines.map((l) => [l.kind, l.url, l.status])).toEqual([
      ['response', `${ctx.site.url}/doc-redirect`, 302],
      ['navigation', `${ctx.site.url}/second-doc`, 200],
      ['response', `${ctx.site.url}/second-doc`, 200],
    ]);
    expect(lines[0]).toMatchObject({ resource_type: 'document', body: null });
    expect(lines[0]?.error).toMatch(/redirect/);
    expect(lines[0]?.headers.location).toBe('/second-doc');
    expect(Math.min(...allSeqs(b))).toBeGreaterThan(before);
  });

  test('a link that loads a new document is a full load too', async () => {
    await navigate(id, '/link');
    const onLink = await waitFor(id, (b) => byUrl(b, '/link').length === 2);
    const click = await ctx.w.call<Body>('POST', `/api/v1/primitive/${id}/click-element`, {
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
    const r = await ctx.w.call<Body>('POST', `/api/v1/primitive/${id}/reload-page`);
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
    const r = await ctx.w.call<Body>('POST', `/api/v1/ops/${id}/navigate`, { body: { url } });
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
      ['navigation', `${ctx.site.url}/spa`],
      ['response', `${ctx.site.url}/spa`],
      ['response', `${ctx.site.url}/api/data.json?spa`],
      ['navigation', `${ctx.site.url}/spa/list`],
      ['navigation', `${ctx.site.url}/spa/list#item-2`],
      ['navigation', `${ctx.site.url}/spa/final?x=1`],
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
    expect(b.url).toBe(`${ctx.site.url}/spa/final?x=1`);
    expect(increasing(lines.map((l) => l.seq as number))).toBe(true);
  });
});

describe('WebSocket lines', () => {
  const id = 'net-ws';
  beforeAll(() => createPage(id));
  afterAll(() => destroyPage(id));

  test('open, sent and received text and binary, close: payloads as exchanged with the server', async () => {
    const receivedBefore = ctx.site.ws.received.length;
    await navigate(id, '/ws');
    const b = await waitFor(id, (x) => (x.websocket as Body[]).some((l) => l.kind === 'close'));
    const lines = b.websocket as Body[];
    const socket = `${ctx.site.wsUrl}/socket`;
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
    const got = ctx.site.ws.received.slice(receivedBefore);
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
    expect(lines[1]?.url).toBe(`${ctx.site.wsUrl}/socket?bad=1`);
  });
});

describe('passive, and behind the same gates as every ops call', () => {
  test('the capture answers while a navigation holds the page lock', async () => {
    const id = 'net-busy';
    await createPage(id);
    await navigate(id, '/second-doc');
    const started = Date.now();
    let navDone = 0;
    const nav = ctx.w
      .call<Body>('POST', `/api/v1/ops/${id}/navigate`, {
        body: { url: `${ctx.site.url}/slow?ms=5000` },
      })
      .then((r) => {
        navDone = Date.now();
        return r;
      });
    // The navigation holds the lock from its first moment (its ~2 s pause, then the load).
    const until = Date.now() + 5_000;
    for (;;) {
      const pages = await ctx.w.call<Body>('GET', '/api/v1/system/status/pages', { auth: false });
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
    const lease = await ctx.w.call<Body>('POST', `/api/v1/ops/${id}/lease`, { body: {} });
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
    const anon = await ctx.w.call<Body>('GET', '/api/v1/ops/no-such-page/network', { auth: false });
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
