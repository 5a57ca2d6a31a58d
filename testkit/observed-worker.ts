import type { Fixture } from './fixture';
import { startFixture } from './fixture';
import { Observer } from './observer';
import type { ApiResponse, RunningWorker } from './worker';
import { startWorker } from './worker';

/**
 * A file's worker with one page `p`, the fixture site, and an observer on the browser's
 * DevTools port that reads what the page saw (events logged by the fixture's pages).
 */
export function useObservedWorker() {
  const ctx = {} as { w: RunningWorker; site: Fixture; eye: Observer };

  beforeAll(async () => {
    ctx.site = await startFixture();
    ctx.w = await startWorker({ env: { DEVTOOLS_PORT: '0' } });
    await ctx.w.waitInitialized();
    await ctx.w.call('POST', '/api/v1/ops/create-page', { body: { page_id: 'p' } });
    ctx.eye = await Observer.attach(ctx.w);
  });
  afterAll(async () => {
    await ctx.eye?.detach();
    await ctx.w?.stop();
    await ctx.site?.close();
  });

  /** One primitive on page `p`. */
  const prim = (action: string, body?: unknown): Promise<ApiResponse<Record<string, any>>> =>
    ctx.w.call<Record<string, any>>('POST', `/api/v1/primitive/p/${action}`, { body });

  return { ctx, prim };
}
