import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { CDPSession, Page } from 'puppeteer-core';
import { createClient } from './http';
import { ISOLATED_READ, withWarmPage } from './ops-ratio';
import type { BenchSection, Row } from './section';
import { atMost } from './section';
import type { BenchWorker } from './spawn';
import { median, percentile, range } from './stats';

/**
 * Section `content`: where extract-content's time goes on a ~200 kB page. Each stage of the
 * API call is timed alone, interleaved with the others on the same warm page: the read in an
 * isolated world over CDP, the read from the document's node (what the worker does for a
 * document it has read before), a title read (one round trip), JSON encoding of a reply of the size
 * (what the worker no longer does: the HTML goes out as the JSON text Chromium wrote), an HTTP
 * reply of the same size from a bare server, the worker's HTTP hop without a page, and the
 * whole call against puppeteer's `content()` + `title()`. The read and the bare reply together
 * are the floor any HTTP API in front of the browser stands on.
 */

const SAMPLES = Number(process.env.BENCH_CONTENT_SAMPLES ?? 60);
const WARMUP = 5;

interface Stage {
  key: string;
  label: string;
  run(): Promise<number>;
}

async function timed(work: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await work();
  return performance.now() - started;
}

/** A bare HTTP server that answers every request with `body` (JSON), on loopback. */
async function bareServer(body: string): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, {
        'content-type': 'application/json; charset=utf-8',
        'content-length': Buffer.byteLength(body),
      });
      res.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function stages(w: BenchWorker, pageId: string, page: Page): Promise<Row[]> {
  const session: CDPSession = await page.createCDPSession();
  const tree = await session.send('Page.getFrameTree');
  const world = await session.send('Page.createIsolatedWorld', {
    frameId: tree.frameTree.frame.id,
    worldName: 'bench-profile',
  });
  const isolatedRead = (): Promise<unknown> =>
    session.send('Runtime.evaluate', {
      expression: ISOLATED_READ,
      contextId: world.executionContextId,
      returnByValue: true,
      awaitPromise: true,
    });
  const doc = await session.send('Runtime.evaluate', {
    expression: 'document',
    contextId: world.executionContextId,
  });
  const { node } = await session.send('DOM.describeNode', {
    objectId: doc.result.objectId as string,
  });
  const nodeRead = (): Promise<unknown> =>
    Promise.all([
      session.send('DOM.getOuterHTML', { backendNodeId: node.backendNodeId }),
      session.send('Runtime.evaluate', {
        expression: 'document.title',
        contextId: world.executionContextId,
        returnByValue: true,
      }),
    ]);
  const sample = await w.client.request('POST', `/api/v1/ops/${pageId}/extract-content`);
  const reply: unknown = JSON.parse(sample.text);
  const bare = await bareServer(sample.text);
  const bareClient = createClient(bare.url, 'unused');
  const list: Stage[] = [
    {
      key: 'direct',
      label: 'direct puppeteer content() + title()',
      run: () => timed(() => Promise.all([page.content(), page.title()])),
    },
    {
      key: 'cdp_read',
      label: 'isolated-world read over CDP (evaluation + string transfer)',
      run: () => timed(isolatedRead),
    },
    {
      key: 'cdp_node_read',
      label: 'read from the document node (DOM.getOuterHTML, the title beside it)',
      run: () => timed(nodeRead),
    },
    {
      key: 'cdp_title',
      label: 'Page.getNavigationHistory (a title read, one round trip)',
      run: () => timed(() => session.send('Page.getNavigationHistory')),
    },
    {
      key: 'json',
      label: 'JSON encoding of a reply of the size (stringify + UTF-8; the API splices instead)',
      run: () => timed(async () => Buffer.from(JSON.stringify(reply))),
    },
    {
      key: 'http_body',
      label: 'same-size reply from a bare node HTTP server',
      run: async () => (await bareClient.request('POST', '/')).ms,
    },
    {
      key: 'http_floor',
      label: "worker's HTTP hop without a page (system/status)",
      run: async () => (await w.client.request('GET', '/api/v1/system/status')).ms,
    },
    {
      key: 'api',
      label: 'extract-content via API',
      run: async () => {
        const r = await w.client.request('POST', `/api/v1/ops/${pageId}/extract-content`);
        if (r.status !== 200) throw new Error(`extract-content answered ${r.status}`);
        return r.ms;
      },
    },
  ];
  const times = new Map<string, number[]>(list.map((s) => [s.key, []]));
  try {
    for (let i = 0; i < WARMUP + SAMPLES; i++) {
      // Rotate the order so that no stage always follows the same one.
      for (let j = 0; j < list.length; j++) {
        const stage = list[(i + j) % list.length] as Stage;
        const ms = await stage.run();
        if (i >= WARMUP) times.get(stage.key)?.push(ms);
      }
    }
  } finally {
    bareClient.close();
    await bare.close();
    await session.detach().catch(() => undefined);
  }
  const med = (key: string): number => median(times.get(key) ?? []);
  // The fastest tenth: what a call costs when the machine's other work does not get in the way.
  const p10 = (key: string): number => percentile(times.get(key) ?? [], 10);
  const rows: Row[] = list.map((s) => ({
    key: `content.${s.key}_ms`,
    label: s.label,
    value: med(s.key),
    unit: 'ms',
    digits: 2,
    detail: `n=${SAMPLES}, range ${range(times.get(s.key) ?? [], 2)} ms`,
  }));
  // What no worker can go below: the read (a document read again goes by its node) and a bare
  // server's reply of the size.
  const floor = med('cdp_node_read') + med('http_body');
  rows.push(
    {
      key: 'content.floor_ms',
      label: 'floor: read + bare reply of the size',
      value: floor,
      unit: 'ms',
      digits: 2,
      detail: `extract-content spends ${(med('api') - floor).toFixed(2)} ms above it`,
    },
    {
      key: 'content.floor_ratio',
      label: 'floor / direct',
      value: floor / med('direct'),
      unit: 'x',
      digits: 2,
    },
    {
      key: 'content.reply_bytes',
      label: 'reply size',
      value: Buffer.byteLength(sample.text),
      unit: '',
      digits: 0,
    },
    {
      key: 'content.ratio',
      label: 'extract-content API / direct',
      value: med('api') / med('direct'),
      unit: 'x',
      target: atMost(1.1, '×'),
      detail:
        `API overhead ${(med('api') - med('direct')).toFixed(2)} ms; fastest tenth ` +
        `${p10('api').toFixed(2)} / ${p10('direct').toFixed(2)} ms = ${(p10('api') / p10('direct')).toFixed(2)}×`,
    },
  );
  return rows;
}

export const contentProfileSection: BenchSection = {
  id: 'content',
  title: `extract-content on a ~200 kB page, stage by stage (medians of ${SAMPLES}, interleaved)`,
  run: (ctx) =>
    withWarmPage(`${ctx.fixture.url}/content-medium`, ({ w, pageId, page }) =>
      stages(w, pageId, page),
    ),
};
