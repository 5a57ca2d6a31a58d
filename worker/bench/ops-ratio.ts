import fs from 'node:fs';
import path from 'node:path';
import puppeteer from 'puppeteer-core';
import type { Browser, CDPSession, Page } from 'puppeteer-core';
import type { BenchSection, Row } from './section';
import { atMost } from './section';
import type { BenchWorker } from './spawn';
import { startWorker, waitInitialized } from './spawn';
import { cpuMs } from '@persona-browser/testkit/procs';
import { median, range } from './stats';

/**
 * Section 3: extract-content and screenshot through the API against the same call made with
 * puppeteer directly on the same warm page (a second CDP client on the worker's own browser).
 */

const SAMPLES = Number(process.env.BENCH_OPS_SAMPLES ?? 30);
const WARMUP = 5;

interface Op {
  key: string;
  label: string;
  api(w: BenchWorker, pageId: string): Promise<number>;
  direct(page: Page): Promise<number>;
}

async function timed(work: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await work();
  return performance.now() - started;
}

async function apiCall(w: BenchWorker, method: string, route: string): Promise<number> {
  const r = await w.client.request(method, route);
  const body = JSON.parse(r.text) as { success?: boolean; error?: string };
  if (r.status !== 200 || !body.success) {
    throw new Error(
      `${method} ${route} answered ${r.status}: ${body.error ?? r.text.slice(0, 200)}`,
    );
  }
  return r.ms;
}

// The direct calls mirror worker/src/browser/page-actions.ts exactly.
const OPS: Op[] = [
  {
    key: 'extract_content',
    label: 'extract-content',
    api: (w, id) => apiCall(w, 'POST', `/api/v1/ops/${id}/extract-content`),
    direct: (page) => timed(() => Promise.all([page.content(), page.title()])),
  },
  {
    key: 'screenshot',
    label: 'screenshot (viewport)',
    api: (w, id) => apiCall(w, 'GET', `/api/v1/ops/${id}/screenshot`),
    direct: (page) => timed(() => page.screenshot({ encoding: 'base64', type: 'png' })),
  },
];

/** The DevTools port the browser wrote into its profile (first line of DevToolsActivePort). */
export function devtoolsUrl(profileDir: string): string {
  const port = fs.readFileSync(path.join(profileDir, 'DevToolsActivePort'), 'utf8').split('\n')[0];
  if (!port || !/^\d+$/.test(port.trim())) throw new Error('no port in DevToolsActivePort');
  return `http://127.0.0.1:${port.trim()}`;
}

async function compare(w: BenchWorker, pageId: string, page: Page, op: Op): Promise<Row[]> {
  for (let i = 0; i < WARMUP; i++) {
    await op.api(w, pageId);
    await op.direct(page);
  }
  const api: number[] = [];
  const direct: number[] = [];
  // CPU spent per call: the worker's (all threads) for the API, this process's for direct calls.
  let workerCpuMs = 0;
  let directCpuMs = 0;
  const runApi = async (): Promise<void> => {
    const before = cpuMs(w.pid);
    api.push(await op.api(w, pageId));
    workerCpuMs += cpuMs(w.pid) - before;
  };
  const runDirect = async (): Promise<void> => {
    const before = process.cpuUsage();
    direct.push(await op.direct(page));
    const used = process.cpuUsage(before);
    directCpuMs += (used.user + used.system) / 1000;
  };
  for (let i = 0; i < SAMPLES; i++) {
    // Alternate which goes first so neither side always follows the other.
    if (i % 2 === 0) {
      await runApi();
      await runDirect();
    } else {
      await runDirect();
      await runApi();
    }
  }
  const apiMs = median(api);
  const directMs = median(direct);
  return [
    {
      key: `ops.${op.key}.api_ms`,
      label: `${op.label} via API`,
      value: apiMs,
      unit: 'ms',
      digits: 1,
      detail: `n=${SAMPLES}, range ${range(api, 1)} ms`,
    },
    {
      key: `ops.${op.key}.direct_ms`,
      label: `${op.label} direct puppeteer`,
      value: directMs,
      unit: 'ms',
      digits: 1,
      detail: `n=${SAMPLES}, range ${range(direct, 1)} ms`,
    },
    {
      key: `ops.${op.key}.ratio`,
      label: `${op.label} API / direct`,
      value: apiMs / directMs,
      unit: 'x',
      target: atMost(1.1, '×'),
      detail: `API overhead ${(apiMs - directMs).toFixed(1)} ms; CPU/call: worker ${(workerCpuMs / SAMPLES).toFixed(1)} ms, direct client ${(directCpuMs / SAMPLES).toFixed(1)} ms`,
    },
  ];
}

/** The worker's in-page read (worker/src/browser/page-actions.ts `contentInPage`), as text. */
export const ISOLATED_READ = `(() => {
  let content = '';
  for (const node of Array.from(document.childNodes)) {
    content += node === document.documentElement
      ? document.documentElement.outerHTML
      : new XMLSerializer().serializeToString(node);
  }
  return { content, title: document.title };
})()`;

type ReadPath = { key: string; label: string; read(): Promise<string> };

/**
 * The three ways to read a page's HTML, on the same warm page and one CDP session: puppeteer's
 * `content()` (a script in the page's main world), the DOM domain (`DOM.getDocument` and
 * `DOM.getOuterHTML`, no script at all) and an isolated world of our own (the worker's path).
 * All three must give the same text; the medians show which is cheapest.
 */
async function readPaths(page: Page): Promise<Row[]> {
  const session: CDPSession = await page.createCDPSession();
  try {
    const tree = await session.send('Page.getFrameTree');
    const world = await session.send('Page.createIsolatedWorld', {
      frameId: tree.frameTree.frame.id,
      worldName: 'bench-read',
    });
    const paths: ReadPath[] = [
      {
        key: 'puppeteer',
        label: 'puppeteer content() + title()',
        read: async () => (await Promise.all([page.content(), page.title()]))[0],
      },
      {
        key: 'dom',
        label: 'DOM domain getOuterHTML',
        read: async () => {
          const doc = await session.send('DOM.getDocument', { depth: 0 });
          const [html] = await Promise.all([
            session.send('DOM.getOuterHTML', { backendNodeId: doc.root.backendNodeId }),
            session.send('Target.getTargetInfo'),
          ]);
          return html.outerHTML;
        },
      },
      {
        key: 'isolated',
        label: "isolated world (the worker's path)",
        read: async () => {
          const res = await session.send('Runtime.evaluate', {
            expression: ISOLATED_READ,
            contextId: world.executionContextId,
            returnByValue: true,
          });
          return (res.result.value as { content: string }).content;
        },
      },
    ];
    const texts = await Promise.all(paths.map((p) => p.read()));
    if (new Set(texts).size !== 1) throw new Error('the read paths disagree on the page HTML');
    const times = new Map<string, number[]>(paths.map((p) => [p.key, []]));
    for (let i = 0; i < WARMUP + SAMPLES; i++) {
      // Rotate the order so that no path always runs first.
      for (let j = 0; j < paths.length; j++) {
        const p = paths[(i + j) % paths.length] as ReadPath;
        const started = performance.now();
        await p.read();
        if (i >= WARMUP) times.get(p.key)?.push(performance.now() - started);
      }
    }
    const med = (key: string): number => median(times.get(key) ?? []);
    const rows: Row[] = paths.map((p) => ({
      key: `ops.read_path.${p.key}_ms`,
      label: `page HTML read: ${p.label}`,
      value: med(p.key),
      unit: 'ms',
      digits: 2,
      detail: `n=${SAMPLES}, range ${range(times.get(p.key) ?? [], 2)} ms, ${texts[0]?.length ?? 0} chars`,
    }));
    for (const key of ['isolated', 'dom']) {
      rows.push({
        key: `ops.read_path.${key}_ratio`,
        label: `page HTML read: ${key === 'dom' ? 'DOM domain' : 'isolated world'} / puppeteer`,
        value: med(key) / med('puppeteer'),
        unit: 'x',
        target: atMost(1.1, '×'),
      });
    }
    return rows;
  } finally {
    await session.detach().catch(() => undefined);
  }
}

/**
 * The HTTP round trip alone (GET /api/v1/system/status: no page, no browser), on the same
 * keep-alive client: the part of an API call that no page read can remove.
 */
async function httpFloor(w: BenchWorker): Promise<Row> {
  const times: number[] = [];
  for (let i = 0; i < WARMUP + SAMPLES; i++) {
    const r = await w.client.request('GET', '/api/v1/system/status');
    if (r.status !== 200) throw new Error(`system/status answered ${r.status}`);
    if (i >= WARMUP) times.push(r.ms);
  }
  return {
    key: 'ops.http_floor_ms',
    label: 'HTTP round trip (system/status)',
    value: median(times),
    unit: 'ms',
    digits: 2,
    detail: `n=${SAMPLES}, range ${range(times, 2)} ms`,
  };
}

/** A worker with one page at `url`, and the same page through a direct puppeteer connection. */
export interface WarmPage {
  w: BenchWorker;
  pageId: string;
  page: Page;
  browser: Browser;
}

/**
 * Runs `body` on a fresh worker (DevTools on a port too: the direct calls go through it) whose
 * one page has navigated to `url`, beside puppeteer connected straight to that page; stops both.
 */
export async function withWarmPage<T>(
  url: string,
  body: (warm: WarmPage) => Promise<T>,
): Promise<T> {
  const w = await startWorker({ DEVTOOLS_PORT: '0' });
  let browser: Browser | null = null;
  try {
    await waitInitialized(w);
    const created = await w.client.json<{ page_id: string }>('POST', '/api/v1/ops/create-page', {});
    const pageId = created.body.page_id;
    const nav = await w.client.json('POST', `/api/v1/ops/${pageId}/navigate`, { url });
    if (nav.status !== 200) throw new Error(`navigate answered ${nav.status}`);
    // defaultViewport null: connecting must not resize the worker's page.
    browser = await puppeteer.connect({
      browserURL: devtoolsUrl(w.profileDir),
      defaultViewport: null,
    });
    const page = (await browser.pages()).find((p) => p.url() === url);
    if (!page) throw new Error(`no page at ${url} in the worker's browser`);
    return await body({ w, pageId, page, browser });
  } finally {
    await browser?.disconnect().catch(() => undefined);
    await w.stop();
  }
}

export const opsRatioSection: BenchSection = {
  id: 'ops',
  title: `API vs direct puppeteer on the same warm page (medians of ${SAMPLES}, interleaved)`,
  run: async (ctx) => {
    return withWarmPage(`${ctx.fixture.url}/content`, async ({ w, pageId, page, browser }) => {
      const elements = await page.evaluate(() => document.querySelectorAll('*').length);
      const rows: Row[] = [];
      for (const op of OPS) {
        ctx.progress(`ops: ${op.label}`);
        rows.push(...(await compare(w, pageId, page, op)));
      }
      ctx.progress('ops: page HTML read paths');
      rows.push(...(await readPaths(page)));
      // A large site's page (~500 kB): the fixed cost of the HTTP hop weighs less, the cheaper
      // read more.
      ctx.progress('ops: extract-content on a large page');
      const largeUrl = `${ctx.fixture.url}/content-large`;
      const large = await w.client.json('POST', `/api/v1/ops/${pageId}/navigate`, {
        url: largeUrl,
      });
      if (large.status !== 200) throw new Error(`navigate answered ${large.status}`);
      const largePage = (await browser.pages()).find((p) => p.url() === largeUrl);
      if (!largePage) throw new Error(`no page at ${largeUrl} in the worker's browser`);
      const extract = OPS[0] as Op;
      rows.push(
        ...(await compare(w, pageId, largePage, {
          ...extract,
          key: 'extract_content_large',
          label: 'extract-content (large page)',
        })),
      );
      ctx.progress('ops: HTTP round trip');
      rows.push(await httpFloor(w));
      rows.push({
        key: 'ops.page_elements',
        label: 'fixture page elements',
        value: elements,
        unit: '',
        digits: 0,
      });
      return rows;
    });
  },
};
