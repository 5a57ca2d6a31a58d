import type { RunningWorker, StartOptions } from './worker';
import { startWorker } from './worker';

/** What a file's site offers the helper: where it answers, and how it ends. */
interface Site {
  url: string;
  close(): Promise<unknown>;
}

/**
 * A file's site, started before its tests and closed after them (registers its own
 * beforeAll/afterAll). Read `ctx.site` inside tests and hooks, not at the file's top level.
 */
export function useSite<S extends Site>(start: () => Promise<S>): { site: S } {
  const ctx = {} as { site: S };
  beforeAll(async () => {
    ctx.site = await start();
  });
  afterAll(async () => {
    await ctx.site?.close();
  });
  return ctx;
}

export interface SiteWorkerOptions<S extends Site> {
  site: () => Promise<S>;
  /** The worker's environment, which may name the site (its URL). */
  env?: (site: S) => Record<string, string | undefined>;
  /** Pages created once the worker is initialized; each must be created (200). */
  pages?: string[];
  /** The worker's other start options. */
  start?: Omit<StartOptions, 'env'>;
}

/**
 * A file's site and one worker beside it, initialized, with its pages created: the set-up most
 * worker and plugin files share (registers its own beforeAll/afterAll; the worker stops first).
 */
export function useSiteWorker<S extends Site>(
  o: SiteWorkerOptions<S>,
): { site: S; w: RunningWorker } {
  const ctx = {} as { site: S; w: RunningWorker };
  beforeAll(async () => {
    ctx.site = await o.site();
    ctx.w = await startWorker({ ...o.start, env: o.env?.(ctx.site) });
    await ctx.w.waitInitialized();
    for (const page_id of o.pages ?? []) {
      const created = await ctx.w.call('POST', '/api/v1/ops/create-page', { body: { page_id } });
      if (created.status !== 200) {
        throw new Error(
          `page ${page_id} not created: ${created.status} ${JSON.stringify(created.body)}`,
        );
      }
    }
  });
  afterAll(async () => {
    await ctx.w?.stop();
    await ctx.site?.close();
  });
  return ctx;
}
