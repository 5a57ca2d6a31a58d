import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { InstanceSample } from '@persona-browser/contracts';
import { SYSTEM_PATHS } from '@persona-browser/contracts';
import { descendantsOf, pssMb } from '@persona-browser/testkit/procs';
import type { RunningWorker } from '@persona-browser/testkit/worker';
import { browserPids, sleep, startWorker } from '@persona-browser/testkit/worker';
import { until } from '@persona-browser/testkit/waker';

/**
 * The worker's own browser process tree, as the waker samples it where it cannot read the
 * host's /proc: compared with an independent reading of /proc for the same browser.
 */
type TreeBody = { success: boolean; page_id: null; tree: InstanceSample | null };

let w: RunningWorker;
let site: http.Server;
let siteUrl: string;
/** The worker's first read of the tree, and /proc read right after it. */
let first: {
  body: InstanceSample;
  root: number;
  tree: number[];
  expectedCpu: number;
  /** The tree's PSS summed, in MB, read before and after the worker's read. */
  pss: number[];
};

// A web worker spinning forever: the renderer burns a core while the page stays responsive.
const BUSY_PAGE =
  '<!doctype html><title>busy</title><script>' +
  "new Worker(URL.createObjectURL(new Blob(['for (;;) {}'], { type: 'text/javascript' })));" +
  '</script>';

beforeAll(async () => {
  site = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(BUSY_PAGE);
  });
  await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
  siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}/`;
  w = await startWorker({ persona: 'treeperson' });
  await w.waitInitialized();
  // Before any test: a read covers the time since the previous one. A browser just started still
  // grows (CI's run saw 187 MB read, then 290 MB of PSS a moment later): its memory is read from
  // /proc before and after the worker's read, which lies between the two.
  const pssBefore = treePss(browserRoot());
  const body = await readTree();
  const root = browserRoot();
  const tree = [root, ...descendantsOf(root)];
  const expectedCpu = lifetimeCpuPct(root, tree);
  const pss = [pssBefore, treePss(root)];
  first = { body, root, tree, expectedCpu, pss };
});
afterAll(async () => {
  await w?.stop();
  await new Promise((r) => site?.close(r));
});

const readTree = async (): Promise<InstanceSample> => {
  const r = await w.call<TreeBody>('GET', SYSTEM_PATHS.processTree);
  expect(r.status).toBe(200);
  expect(r.body).toMatchObject({ success: true, page_id: null });
  expect(r.body.tree).not.toBeNull();
  return r.body.tree as InstanceSample;
};

/** The browser's main process: the one of its processes whose parent is not one of them. */
function browserRoot(): number {
  const pids = browserPids(w);
  const ppid = (pid: number): number =>
    Number(fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')[1]);
  const roots = pids.filter((pid) => !pids.includes(ppid(pid)));
  expect(roots).toHaveLength(1);
  return roots[0]!;
}

/** The PSS of the process `root` and its descendants, summed, in MB. */
function treePss(root: number): number {
  return [root, ...descendantsOf(root)].reduce((sum, pid) => sum + (pssMb(pid) ?? 0), 0);
}

/** The tree's CPU average since its root started, in % of one core, from /proc alone. */
function lifetimeCpuPct(root: number, tree: number[]): number {
  const hz = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
  const fields = (pid: number): string[] =>
    fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  const ticks = tree
    .map((pid) => fields(pid))
    .reduce((sum, f) => sum + Number(f[11]) + Number(f[12]), 0);
  const uptimeTicks = Number(fs.readFileSync('/proc/uptime', 'utf8').split(' ')[0]) * hz;
  const elapsed = uptimeTicks - Number(fields(root)[19]);
  return (ticks / elapsed) * 100;
}

describe('GET /api/v1/system/process-tree', () => {
  test("the first read: the browser's pid, its processes and memory as /proc shows them, CPU since it started", async () => {
    const { body, root, tree, expectedCpu, pss } = first;
    expect(body.pid).toBe(root);
    expect(body.procs).toBeGreaterThanOrEqual(2);
    // Chromium may start or end a helper between the two readings.
    expect(Math.abs(body.procs - tree.length)).toBeLessThanOrEqual(1);
    expect(body.rss_mb).toBeGreaterThan(0);
    expect(body.rss_mb).toBeGreaterThan(Math.min(...pss) * 0.8);
    expect(body.rss_mb).toBeLessThan(Math.max(...pss) * 1.25);
    // The first read covers the browser's life so far: its average, not a later interval's.
    expect(Math.abs(body.cpu_pct - expectedCpu)).toBeLessThan(Math.max(2, expectedCpu * 0.3));
  });

  test('CPU covers the time since the previous read: it rises while a page burns a core', async () => {
    // A browser that has just started is still busy setting up: it has settled once a read shows
    // it idle since the one before.
    await readTree();
    await until(
      async () => ((await readTree()).cpu_pct < 5 ? true : null),
      30_000,
      'the browser to settle (under 5 % of a core between two reads)',
    );
    // Time itself is tested: CPU over an interval.
    await sleep(2_000);
    const idle = await readTree();
    const created = await w.call<{ page_id: string }>('POST', '/api/v1/ops/create-page', {
      body: { page_id: 'burner' },
    });
    expect(created.status).toBe(200);
    const nav = await w.call('POST', '/api/v1/ops/burner/navigate', { body: { url: siteUrl } });
    expect(nav.status).toBe(200);
    await readTree();
    // Time itself is tested: CPU over an interval.
    await sleep(2_000);
    const busy = await readTree();
    // Whatever share of a core a shared machine leaves the spinning worker, far above idle.
    expect(busy.cpu_pct).toBeGreaterThan(5);
    expect(busy.cpu_pct).toBeGreaterThan(2 * idle.cpu_pct);
    expect(busy.pid).toBe(idle.pid);
    await w.call('DELETE', '/api/v1/ops/burner/destroy-page');
  });

  test('needs the key', async () => {
    const r = await w.call('GET', SYSTEM_PATHS.processTree, { auth: false });
    expect(r).toMatchObject({ status: 401, body: { detail: 'Invalid API key' } });
  });
});
