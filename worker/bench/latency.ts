import { loadTest } from './http';
import type { BenchSection, Row } from './section';
import { atMost } from './section';
import type { BenchWorker } from './spawn';
import { startWorker, waitInitialized } from './spawn';
import { cpuMs } from '@persona-browser/testkit/procs';
import { median, percentile, range, sleep } from './stats';

/** Section 2: status and status/pages latency under 20 concurrent clients, then with a stuck page. */

const CONCURRENCY = 20;
const REQUESTS = Number(process.env.BENCH_LATENCY_REQUESTS ?? 2000);
const REPS = Number(process.env.BENCH_LATENCY_REPS ?? 5);
const PAGES = 3;
const SINGLE_CLIENT_REQUESTS = 500;
const STUCK_TIMEOUT_MS = 30_000;
const ENDPOINTS = [
  { key: 'status', route: '/api/v1/system/status' },
  { key: 'status_pages', route: '/api/v1/system/status/pages' },
] as const;

interface PageEntry {
  page_id: string;
  state: string;
}

interface Sample {
  p50: number[];
  p99: number[];
  rps: number[];
  workerCpuUs: number[];
}

/** Closed-loop load from `CONCURRENCY` clients, REPS times, plus one single-client run. */
async function measure(w: BenchWorker, condition: string): Promise<Row[]> {
  const rows: Row[] = [];
  const samples = new Map<string, Sample>(
    ENDPOINTS.map((e) => [e.key, { p50: [], p99: [], rps: [], workerCpuUs: [] }]),
  );
  for (const e of ENDPOINTS) await loadTest(w.client, e.route, 200, CONCURRENCY); // warm-up
  for (let rep = 0; rep < REPS; rep++) {
    for (const e of ENDPOINTS) {
      const s = samples.get(e.key) as Sample;
      const cpu0 = cpuMs(w.pid);
      const t0 = performance.now();
      const ms = await loadTest(w.client, e.route, REQUESTS, CONCURRENCY);
      s.rps.push(REQUESTS / ((performance.now() - t0) / 1000));
      s.workerCpuUs.push(((cpuMs(w.pid) - cpu0) * 1000) / REQUESTS);
      s.p50.push(percentile(ms, 50));
      s.p99.push(percentile(ms, 99));
    }
  }
  for (const e of ENDPOINTS) {
    const s = samples.get(e.key) as Sample;
    const single = await loadTest(w.client, e.route, SINGLE_CLIENT_REQUESTS, 1);
    const label = `GET ${e.route.replace('/api/v1', '')}`;
    const key = `latency.${condition}.${e.key}`;
    rows.push(
      {
        key: `${key}.p50_ms`,
        label: `${label} p50 (${condition})`,
        value: median(s.p50),
        unit: 'ms',
        digits: 2,
        target: atMost(5, 'ms'),
        detail: `median of ${REPS} runs × ${REQUESTS} req; runs ${range(s.p50, 2)} ms`,
      },
      {
        key: `${key}.p99_ms`,
        label: `${label} p99 (${condition})`,
        value: median(s.p99),
        unit: 'ms',
        digits: 2,
        target: atMost(50, 'ms'),
        detail: `runs ${range(s.p99, 1)} ms`,
      },
      {
        key: `${key}.rps`,
        label: `  throughput at ${CONCURRENCY} clients`,
        value: median(s.rps),
        unit: 'req/s',
        detail: `worker CPU ${median(s.workerCpuUs).toFixed(0)} µs/req (all threads)`,
      },
      {
        key: `${key}.single_client_p50_ms`,
        label: `  p50 with 1 client (service time)`,
        value: percentile(single, 50),
        unit: 'ms',
        digits: 2,
        detail: `${SINGLE_CLIENT_REQUESTS} sequential req; p99 ${percentile(single, 99).toFixed(2)} ms`,
      },
    );
  }
  return rows;
}

async function pageStates(w: BenchWorker): Promise<PageEntry[]> {
  const r = await w.client.json<{ pages: PageEntry[] }>('GET', '/api/v1/system/status/pages');
  return r.body.pages;
}

export const latencySection: BenchSection = {
  id: 'latency',
  title: `Status latency (${CONCURRENCY} concurrent keep-alive clients, ${PAGES} pages open)`,
  run: async (ctx) => {
    const w = await startWorker();
    try {
      await waitInitialized(w);
      const ids: string[] = [];
      for (let i = 0; i < PAGES; i++) {
        const r = await w.client.json<{ page_id: string }>('POST', '/api/v1/ops/create-page', {});
        if (r.status !== 200) throw new Error(`create-page answered ${r.status}`);
        ids.push(r.body.page_id);
      }
      ctx.progress('latency: measuring with idle pages');
      const rows = await measure(w, 'idle');

      const stuckId = ids[0] as string;
      const nav = await w.client.json('POST', `/api/v1/ops/${stuckId}/navigate`, {
        url: `${ctx.fixture.url}/freeze`,
      });
      if (nav.status !== 200) throw new Error(`navigate to /freeze answered ${nav.status}`);
      const navigatedAt = performance.now();
      ctx.progress('latency: waiting for the frozen page to be marked stuck');
      for (;;) {
        const pages = await pageStates(w);
        if (pages.find((p) => p.page_id === stuckId)?.state === 'stuck') break;
        if (performance.now() - navigatedAt > STUCK_TIMEOUT_MS) {
          throw new Error(`page not marked stuck after ${STUCK_TIMEOUT_MS} ms`);
        }
        await sleep(100);
      }
      const stuckMs = performance.now() - navigatedAt;
      ctx.progress('latency: measuring with one stuck page');
      rows.push(...(await measure(w, 'stuck')));
      const after = await pageStates(w);
      const stillStuck = after.find((p) => p.page_id === stuckId)?.state === 'stuck';
      rows.push({
        key: 'latency.stuck_detected_s',
        label: 'navigate(/freeze) answered → state stuck',
        value: stuckMs / 1000,
        unit: 's',
        digits: 1,
        detail: `script loops 0.3 s after load; still stuck after measuring: ${stillStuck ? 'yes' : 'no'}`,
      });
      return rows;
    } finally {
      await w.stop();
    }
  },
};
