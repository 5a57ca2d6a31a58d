import crypto from 'node:crypto';
import type { NewHttpLine, NewWsLine } from '../src/capture/lines';
import { CHUNK_RAW_BYTES, INLINE_MAX_CHARS, LineStore } from '../src/capture/store';

/** The line store on its own: order, emptying, budget, filters and contents. */

const http = (url: string, extra: Partial<NewHttpLine> = {}): NewHttpLine => ({
  ts: 1_700_000_000,
  kind: 'response',
  method: 'GET',
  url,
  resource_type: 'fetch',
  status: 200,
  content_type: 'text/plain',
  headers: { 'content-type': 'text/plain' },
  body_length: 0,
  body_truncated: false,
  error: null,
  ...extra,
});

const ws = (kind: NewWsLine['kind'], binary = false): NewWsLine => ({
  ts: 1_700_000_000,
  kind,
  url: 'ws://site/socket',
  binary,
  payload_length: 0,
});

const all = (s: LineStore, includeBody = true) => s.query({ since: 0, includeBody });

/** Resolves once every queued line has entered the store. */
async function settled(s: LineStore): Promise<void> {
  while (s.stats().pending_lines > 0) await new Promise((r) => setTimeout(r, 5));
}

describe('LineStore', () => {
  test('seq is shared by both lists, strictly increasing, and mark is the highest one', async () => {
    const s = new LineStore();
    s.appendHttp(http('https://a/1'), 'one');
    s.appendWs(ws('open'), null);
    s.appendHttp(http('https://a/2'), 'two');
    s.appendWs(ws('received'), 'hi');
    const r = await all(s);
    expect(r.http.map((l) => l.seq)).toEqual([1, 3]);
    expect(r.websocket.map((l) => l.seq)).toEqual([2, 4]);
    expect(r.mark).toBe(4);
    expect(r.http.map((l) => l.body)).toEqual(['one', 'two']);
    expect(r.websocket.map((l) => l.payload)).toEqual([null, 'hi']);
  });

  test('a big blob compressed on the thread pool does not let a later line overtake it', async () => {
    const s = new LineStore();
    const big = crypto.randomBytes(400_000).toString('hex'); // 800,000 characters, async path
    s.appendHttp(http('https://a/big'), big);
    s.appendHttp(http('https://a/small'), 'small');
    expect(s.stats().pending_lines).toBe(2);
    expect((await all(s)).http).toEqual([]);
    await settled(s);
    const r = await all(s);
    expect(r.http.map((l) => [l.seq, l.url])).toEqual([
      [1, 'https://a/big'],
      [2, 'https://a/small'],
    ]);
    expect(r.http[0]?.body).toBe(big);
  });

  test('a reserved place keeps its order: later lines wait; a cancelled place takes no seq', async () => {
    const s = new LineStore();
    const first = s.reserve();
    const dropped = s.reserve();
    s.appendWs(ws('received'), 'after');
    expect((await all(s)).websocket).toEqual([]);
    expect(s.mark).toBe(0);
    dropped.cancel();
    first.fillHttp(http('https://a/body-read-late'), 'late body');
    // Filling or cancelling twice changes nothing.
    first.fillHttp(http('https://a/again'), 'again');
    dropped.fillHttp(http('https://a/cancelled'), 'x');
    const r = await all(s);
    expect(r.http.map((l) => [l.seq, l.url, l.body])).toEqual([
      [1, 'https://a/body-read-late', 'late body'],
    ]);
    expect(r.websocket.map((l) => [l.seq, l.payload])).toEqual([[2, 'after']]);
  });

  test('lines waiting behind a slow body are bounded: past 64 MB new ones are dropped', async () => {
    const s = new LineStore();
    const place = s.reserve();
    const payload = 'p'.repeat(2000);
    for (let i = 0; i < 40_000; i++) s.appendWs(ws('received'), payload); // 80 MB
    const st = s.stats();
    expect(st.pending_bytes).toBeLessThanOrEqual(64 * 1024 * 1024 + 4096);
    expect(st.pending_bytes).toBeGreaterThan(60 * 1024 * 1024);
    expect(st.dropped_lines).toBeGreaterThan(5_000);
    expect(st.mark).toBe(0);
    place.fillHttp(http('https://a/slow'), 'finally');
    const after = s.stats();
    expect(after.pending_bytes).toBe(0);
    expect(after.mark).toBe(1 + 40_000 - st.dropped_lines);
    const r = await s.query({ since: 0, includeBody: false });
    expect(r.http.map((l) => l.seq)).toEqual([1]);
  });

  test('since, url_contains and resource_type filter; mark counts filtered lines too', async () => {
    const s = new LineStore();
    s.appendHttp(http('https://a/doc', { resource_type: 'document' }), 'd');
    s.appendHttp(http('https://a/api/x', { resource_type: 'xhr' }), 'x');
    s.appendWs(ws('sent'), 'frame');
    s.appendHttp(http('https://a/api/f'), 'f');
    const since = await s.query({ since: 2, includeBody: false });
    expect(since.http.map((l) => l.seq)).toEqual([4]);
    expect(since.websocket.map((l) => l.seq)).toEqual([3]);
    const byType = await s.query({ since: 0, resourceType: 'xhr', includeBody: false });
    expect(byType.http.map((l) => l.url)).toEqual(['https://a/api/x']);
    // resource_type filters HTTP lines only.
    expect(byType.websocket).toHaveLength(1);
    const byUrl = await s.query({ since: 0, urlContains: '/api/', includeBody: false });
    expect(byUrl.http.map((l) => l.url)).toEqual(['https://a/api/x', 'https://a/api/f']);
    expect(byUrl.websocket).toEqual([]);
    const none = await s.query({ since: 0, urlContains: 'nowhere', includeBody: false });
    expect(none).toEqual({ mark: 4, http: [], websocket: [] });
    expect(Object.keys(since.http[0] ?? {})).not.toContain('body');
    expect(Object.keys(since.websocket[0] ?? {})).not.toContain('payload');
  });

  test('clear empties both lists in queue order, keeps the tagged lines that pass, seq goes on', async () => {
    const s = new LineStore();
    s.appendHttp(http('https://old/1'), 'old');
    s.appendWs(ws('received'), 'old frame');
    s.appendHttp(http('https://new/redirect', { status: 302 }), null, 'L2');
    s.appendHttp(http('https://blocked/x'), 'kept?', 'L2');
    s.appendHttp(http('https://other/y'), 'tag of another load', 'L1');
    const big = 'z'.repeat(INLINE_MAX_CHARS * 40);
    s.appendHttp(http('https://old/big'), big); // still compressing when the clear is queued
    s.clear('L2', (url) => !url.includes('blocked'));
    s.appendHttp(http('https://new/doc'), 'doc', 'L2');
    await settled(s);
    const r = await all(s);
    expect(r.http.map((l) => [l.seq, l.url])).toEqual([
      [3, 'https://new/redirect'],
      [7, 'https://new/doc'],
    ]);
    expect(r.websocket).toEqual([]);
    expect(r.mark).toBe(7);
    expect(s.stats().lines).toBe(2);
  });

  test('binary payloads come back as the same base64; inline and blob alike', async () => {
    const s = new LineStore();
    const small = crypto.randomBytes(100).toString('base64');
    const large = crypto.randomBytes(50_000).toString('base64');
    s.appendWs(ws('received', true), small);
    s.appendWs(ws('received', true), large);
    await settled(s);
    const r = await all(s);
    expect(r.websocket.map((l) => l.payload)).toEqual([small, large]);
  });

  test('over budget, whole oldest chunks go first; the lines held are always the newest', async () => {
    const budget = 64 * 1024;
    const s = new LineStore({ budgetBytes: budget });
    let maxBytes = 0;
    for (let i = 0; i < 20_000; i++) {
      const noise = crypto.randomBytes(24).toString('hex');
      s.appendWs({ ...ws('received'), payload_length: 80 }, `{"n":${i},"noise":"${noise}"}`);
      maxBytes = Math.max(maxBytes, s.stats().bytes);
    }
    const st = s.stats();
    expect(maxBytes).toBeLessThanOrEqual(budget);
    expect(st.dropped_lines).toBeGreaterThan(0);
    expect(st.lines + st.dropped_lines).toBe(20_000);
    const r = await all(s);
    const seqs = r.websocket.map((l) => l.seq);
    expect(seqs).toEqual(
      Array.from({ length: seqs.length }, (_, k) => 20_000 - seqs.length + 1 + k),
    );
    const ns = r.websocket.map((l) => (JSON.parse(l.payload as string) as { n: number }).n);
    expect(ns.at(-1)).toBe(19_999);
    // Compression works: far more raw text is held than the budget would fit uncompressed.
    const rawHeld = r.websocket.reduce((acc, l) => acc + (l.payload as string).length + 100, 0);
    expect(rawHeld).toBeGreaterThan(budget);
  });

  test('a line bigger than a tiny budget is dropped rather than kept over budget', async () => {
    const s = new LineStore({ budgetBytes: 4096 });
    s.appendHttp(http('https://a/huge'), crypto.randomBytes(20_000).toString('hex'));
    await settled(s);
    expect(s.stats().bytes).toBeLessThanOrEqual(4096);
    expect(s.stats().dropped_lines).toBe(1);
    s.appendHttp(http('https://a/next'), 'fits');
    expect((await all(s)).http.map((l) => l.url)).toEqual(['https://a/next']);
  });

  test('a reply stops carrying contents past its limit, oldest first, and says so', async () => {
    const s = new LineStore({ maxReplyChars: 10_000 });
    for (let i = 0; i < 4; i++) s.appendHttp(http(`https://a/${i}`), String(i).repeat(4_000));
    s.appendHttp(http('https://a/png', { content_type: 'image/png' }), null);
    await settled(s);
    const r = await all(s);
    expect(r.http.map((l) => l.body?.length ?? null)).toEqual([4000, 4000, null, null, null]);
    expect(r.http[2]?.error).toMatch(/since=2/);
    expect(r.http[4]?.error).toBeNull();
  });

  test('chunks are compressed once full: stored bytes far below the raw bytes', async () => {
    const s = new LineStore();
    const headers: Record<string, string> = {
      'content-type': 'application/json; charset=utf-8',
      'cache-control': 'no-store',
      server: 'nginx',
    };
    for (let i = 0; i < 2_000; i++) {
      s.appendHttp(http(`https://shop.example/api/items/${i}`, { headers }), `{"id":${i}}`);
    }
    const st = s.stats();
    expect(st.chunks).toBeGreaterThan(2);
    expect(st.raw_bytes_in).toBeGreaterThan(CHUNK_RAW_BYTES * 2);
    expect(st.bytes * 4).toBeLessThan(st.raw_bytes_in);
  });
});
