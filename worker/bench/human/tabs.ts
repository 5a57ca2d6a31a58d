import fs from 'node:fs';
import path from 'node:path';
import puppeteer from 'puppeteer-core';
import type { Browser, Page } from 'puppeteer-core';
import type { BenchWorker } from '../spawn';
import { sleep } from '../stats';

/** Tabs of the worker's own browser: opened through the API, then found over CDP. */

/** The DevTools port the browser wrote into its profile (first line of DevToolsActivePort). */
async function devtoolsUrl(profileDir: string, timeoutMs = 10_000): Promise<string> {
  const file = path.join(profileDir, 'DevToolsActivePort');
  const until = performance.now() + timeoutMs;
  for (;;) {
    const port = fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n')[0]?.trim() : '';
    if (port && /^\d+$/.test(port)) return `http://127.0.0.1:${port}`;
    if (performance.now() > until) throw new Error(`no port in ${file}`);
    await sleep(100);
  }
}

/** A second CDP client on the worker's browser; `disconnect()` it, never `close()`. */
export async function connectToWorker(w: BenchWorker): Promise<Browser> {
  // defaultViewport null: connecting must not resize the worker's pages.
  return puppeteer.connect({ browserURL: await devtoolsUrl(w.profileDir), defaultViewport: null });
}

async function api(w: BenchWorker, route: string, body: unknown): Promise<void> {
  const r = await w.client.json<{ success?: boolean; error?: string }>('POST', route, body);
  if (r.status !== 200 || r.body.success !== true) {
    throw new Error(`POST ${route} answered ${r.status}: ${r.body.error ?? ''}`);
  }
}

/** Creates page `pageId` through the API, navigates it to `url`, returns its puppeteer Page. */
export async function openTab(
  w: BenchWorker,
  browser: Browser,
  pageId: string,
  url: string,
): Promise<Page> {
  await api(w, '/api/v1/ops/create-page', { page_id: pageId });
  await api(w, `/api/v1/ops/${encodeURIComponent(pageId)}/navigate`, { url });
  const until = performance.now() + 10_000;
  for (;;) {
    const page = (await browser.pages()).find((p) => p.url() === url);
    if (page) return page;
    if (performance.now() > until) throw new Error(`no tab at ${url} in the worker's browser`);
    await sleep(100);
  }
}
