import type { NetworkFixture } from './network-fixture';
import { startNetworkFixture } from './network-fixture';
import type { RunningWorker } from './worker';
import { startWorker } from './worker';

export type Body = Record<string, any>;

export const HTTP_FIELDS = [
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
export const WS_FIELDS = ['seq', 'ts', 'kind', 'url', 'binary', 'payload_length'].sort();
export const BODY_LIMIT = 2_000_000;

/**
 * One worker and the network fixture for a test file, with the calls the network tests share.
 * Registers its own beforeAll/afterAll.
 */
export function useNetworkWorker() {
  const ctx = {} as { w: RunningWorker; site: NetworkFixture };
  beforeAll(async () => {
    ctx.site = await startNetworkFixture();
    ctx.w = await startWorker();
    await ctx.w.waitInitialized();
  });
  afterAll(async () => {
    await ctx.w?.stop();
    await ctx.site?.close();
  });

  async function createPage(id: string): Promise<void> {
    const r = await ctx.w.call<Body>('POST', '/api/v1/ops/create-page', { body: { page_id: id } });
    expect(r.status).toBe(200);
  }

  async function destroyPage(id: string, lease?: string): Promise<void> {
    await ctx.w.call('DELETE', `/api/v1/ops/${id}/destroy-page`, { lease });
  }

  async function navigate(id: string, path: string): Promise<Body> {
    const r = await ctx.w.call<Body>('POST', `/api/v1/ops/${id}/navigate`, {
      body: { url: ctx.site.url + path },
    });
    expect(r.status).toBe(200);
    expect(r.body.success).toBe(true);
    return r.body;
  }

  function network(id: string, query = '', lease?: string) {
    return ctx.w.call<Body>('GET', `/api/v1/ops/${id}/network${query ? `?${query}` : ''}`, {
      lease,
    });
  }

  /** Polls the capture (with bodies) until `done` holds; the last reply otherwise fails the test. */
  async function waitFor(
    id: string,
    done: (b: Body) => boolean,
    timeoutMs = 20_000,
  ): Promise<Body> {
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
    (b.http as Body[]).filter((l) => l.url === ctx.site.url + path);
  const one = (b: Body, path: string, kind = 'response'): Body => {
    const found = byUrl(b, path).filter((l) => l.kind === kind);
    expect(found).toHaveLength(1);
    return found[0] as Body;
  };
  const served = (path: string) => {
    const s = ctx.site.served.get(path);
    if (!s) throw new Error(`the fixture never served ${path}`);
    return s;
  };

  return { ctx, createPage, destroyPage, navigate, network, waitFor, byUrl, one, served };
}

export const allSeqs = (b: Body): number[] => [
  ...(b.http as Body[]).map((l) => l.seq as number),
  ...(b.websocket as Body[]).map((l) => l.seq as number),
];
export const increasing = (xs: number[]): boolean =>
  xs.every((x, i) => i === 0 || x > (xs[i - 1] as number));
