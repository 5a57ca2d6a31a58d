import path from 'node:path';
import type { Fixture } from './fixture';
import { startFixture } from './fixture';
import type { ApiResponse, RunningWorker } from './worker';
import { startWorker } from './worker';

export type Body = Record<string, unknown>;
export type PageEntry = { page_id: string; url: string; leased: boolean };
/** Jest's asymmetric matchers, typed so that lint sees no `any`. */
export const anyString: unknown = expect.any(String);
export const matching = (re: RegExp): unknown => expect.stringMatching(re);
/** A page that exists for the whole file; unauthenticated calls aim at it and must not touch it. */
export const TARGET = 'p-auth';

export function expectEnvelope(r: ApiResponse<Body>, status: number, pageId: string | null): void {
  expect({ status: r.status, body: r.body }).toEqual({
    status,
    body: { success: false, error: anyString, page_id: pageId },
  });
  expect((r.body.error as string).length).toBeGreaterThan(0);
}

/**
 * One worker (persona `auth`, with page TARGET, and `env` on top of the test kit's) and the
 * fixture for a file of client-mistake tests; after every test the worker must still be up with
 * its browser.
 */
export function useMistakeWorker(env: Record<string, string> = {}) {
  const ctx = {} as { w: RunningWorker; fx: Fixture };

  async function poolPages(): Promise<PageEntry[]> {
    const r = await ctx.w.call<{ pages: PageEntry[] }>('GET', '/api/v1/system/status/pages', {
      auth: false,
    });
    expect(r.status).toBe(200);
    return r.body.pages;
  }

  async function pageIds(): Promise<string[]> {
    return (await poolPages()).map((p) => p.page_id).sort();
  }

  async function createPage(id: string): Promise<void> {
    const r = await ctx.w.call('POST', '/api/v1/ops/create-page', { body: { page_id: id } });
    expect(r.status).toBe(200);
  }

  /** Destroys every page but TARGET, so each test starts from the same pool. */
  async function resetPool(): Promise<void> {
    for (const id of await pageIds()) {
      if (id !== TARGET) {
        await ctx.w.call('DELETE', `/api/v1/ops/${encodeURIComponent(id)}/destroy-page`);
      }
    }
  }

  beforeAll(async () => {
    ctx.fx = await startFixture();
    ctx.w = await startWorker({ persona: 'auth', env });
    await ctx.w.waitInitialized();
    await createPage(TARGET);
  });

  afterAll(async () => {
    await ctx.w?.stop();
    await ctx.fx?.close();
  });

  // Whatever a client sends, the worker survives it with its browser up.
  afterEach(async () => {
    const r = await ctx.w.call<Body>('GET', '/api/v1/system/status', { auth: false });
    expect(r.status).toBe(200);
    expect(r.body.initialized).toBe(true);
    expect(ctx.w.proc.exitCode).toBeNull();
  });

  /** `.update-trigger` at the worker's REPO_ROOT (its scratch folder). */
  const updateTrigger = (): string => path.join(ctx.w.dir, '.update-trigger');

  return { ctx, poolPages, pageIds, createPage, resetPool, updateTrigger };
}
