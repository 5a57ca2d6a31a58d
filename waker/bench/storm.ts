/**
 * A wake storm of real personas on one server (the docker driver, the persona image, Chromium):
 * PERSONAS sleepy personas called at the same moment, each with a create-page through its own
 * port and the key, as a cron across the fleet at 09:00 would. Twice: all in deep sleep (no
 * container), then all in light sleep (`POST /api/personas/{name}/sleep {"depth": "light"}`).
 * For each it prints the time until the last answered, each call's time (min, p50, p90, max),
 * how many were served (200), refused (503 with Retry-After: no start turn within
 * WAKER_WAKE_QUEUE_S) or lost (no answer, any other status), and the most browsers seen
 * starting at once (the waker's `persona_browser_fleet_starts_running`, read every 100 ms).
 * Printed, never asserted.
 * Build and run: npm run build:bench && node waker/dist-bench/bench/storm.js
 * Env: PERSONA_IMAGE (else the image built from this checkout), PERSONAS (20),
 * WAKER_WAKE_CONCURRENCY and WAKER_WAKE_QUEUE_S (passed to the waker; its defaults otherwise).
 */
import os from 'node:os';
import http from 'node:http';
import Docker from 'dockerode';
import { ensurePersonaImage } from '@persona-browser/testkit/image';
import { KEY, call, freePort } from '@persona-browser/testkit/waker';
import { startFleet } from '@persona-browser/testkit/fleet';
import type { RunningWaker } from '@persona-browser/testkit/waker';
import { figures } from './swarm-measure';

const PERSONAS = Number(process.env.PERSONAS ?? 20);
const FLEET = `storm${process.pid}`;
const docker = new Docker();

interface Outcome {
  status: number;
  ms: number;
  retryAfter: string | null;
  error: string | null;
}

/** A create-page through `port` with the key, by http.request (bounded: 3 minutes). */
function createPage(port: number, pageId: string): Promise<Outcome> {
  const body = JSON.stringify({ page_id: pageId });
  const started = performance.now();
  return new Promise((resolve) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/api/v1/ops/create-page',
        agent: false,
        headers: {
          authorization: `Bearer ${KEY}`,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
        },
      },
      (res) => {
        res.resume();
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            ms: performance.now() - started,
            retryAfter: res.headers['retry-after'] ?? null,
            error: null,
          }),
        );
      },
    );
    req.setTimeout(180_000, () => req.destroy(new Error('no answer within 180 s')));
    req.on('error', (err) =>
      resolve({ status: 0, ms: performance.now() - started, retryAfter: null, error: err.message }),
    );
    req.end(body);
  });
}

/** The most starts the waker had running at once while `work` ran (its metric, every 100 ms). */
async function peakStarts<T>(
  w: RunningWaker,
  work: Promise<T>,
): Promise<{ result: T; peak: number }> {
  let peak = 0;
  let done = false;
  const sampling = (async () => {
    while (!done) {
      const m = await call(`${w.url}/metrics`).catch(() => null);
      const line = /^persona_browser_fleet_starts_running (\d+)/m.exec(String(m?.body ?? ''));
      if (line) peak = Math.max(peak, Number(line[1]));
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  const result = await work.finally(() => (done = true));
  await sampling;
  return { result, peak };
}

async function storm(w: RunningWaker, ports: number[], round: string): Promise<object> {
  const started = performance.now();
  const { result, peak } = await peakStarts(
    w,
    Promise.all(ports.map((port, i) => createPage(port, `${round}${i}`))),
  );
  const served = result.filter((o) => o.status === 200);
  const refused = result.filter((o) => o.status === 503 && o.retryAfter !== null);
  const lost = result.filter((o) => !served.includes(o) && !refused.includes(o));
  return {
    calls: ports.length,
    last_answered_ms: Math.round(performance.now() - started),
    call_ms: figures(result.map((o) => o.ms)),
    served: served.length,
    refused: refused.length,
    lost: lost.length,
    lost_detail: lost.map((o) => o.error ?? `status ${o.status}`),
    most_starts_at_once: peak,
  };
}

async function main(): Promise<void> {
  delete process.env.DISPLAY;
  const image = process.env.PERSONA_IMAGE ?? (await ensurePersonaImage());
  const ports = await Promise.all(Array.from({ length: PERSONAS }, () => freePort()));
  const names = ports.map((_, i) => `s${i}`);
  const { waker: w } = await startFleet({
    driver: 'docker',
    fleet: FLEET,
    port: await freePort(),
    image,
    personas: Object.fromEntries(
      names.map((n, i) => [n, `PORT=${ports[i]}\nMODE=sleepy\nIDLE_TIMEOUT=3600\n`]),
    ),
    env: { LIGHT_SLEEP_SECONDS: '3600', LOG_LEVEL: 'warn' },
  });
  const report: Record<string, unknown> = {
    personas: PERSONAS,
    cpus: os.availableParallelism(),
    wake_concurrency: process.env.WAKER_WAKE_CONCURRENCY ?? 'default (cores)',
  };
  try {
    report.deep = await storm(w, ports, 'd');
    for (const name of names) {
      // One refused in the storm sleeps deep: woken first, so that every one goes light.
      const woke = await call(`${w.url}/api/personas/${name}/wake`, { method: 'POST' });
      if (woke.status !== 200)
        throw new Error(`${name} did not wake: ${JSON.stringify(woke.body)}`);
      const slept = await call(`${w.url}/api/personas/${name}/sleep`, {
        method: 'POST',
        body: { depth: 'light' },
      });
      if ((slept.body as { depth?: string }).depth !== 'light')
        throw new Error(`${name} did not go to light sleep: ${JSON.stringify(slept.body)}`);
    }
    report.light = await storm(w, ports, 'l');
  } finally {
    await w.stop();
    const left = await docker.listContainers({
      all: true,
      filters: { label: [`persona-browser.fleet=${FLEET}`] },
    });
    for (const c of left) await docker.getContainer(c.Id).remove({ force: true });
  }
  process.stdout.write(`${JSON.stringify({ storm: report }, null, 2)}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
