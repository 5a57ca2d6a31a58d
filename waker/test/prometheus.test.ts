import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { RunningPrometheus, Sample } from '@persona-browser/testkit/prometheus';
import { familiesOf, metricNamesIn, startPrometheus } from '@persona-browser/testkit/prometheus';
import { workerPid } from '@persona-browser/testkit/fleet-procs';
import type { RunningWaker } from '@persona-browser/testkit/waker';
import { KEY, ROOT, call, freePort } from '@persona-browser/testkit/waker';
import { startFleet } from '@persona-browser/testkit/fleet';

/**
 * A real Prometheus (Debian's, with a scrape config of its own and the key) scrapes a process
 * fleet, the waker and a persona's port: its query API shows the fleet's and the worker's
 * series, and they move as a sleepy persona wakes, requests pass the front door, a worker is
 * killed from outside and a worker answers calls.
 */
const FLEET = `promtest${process.pid}`;
const F = 'persona_browser_fleet_';
const W = 'persona_browser_worker_';

let waker: RunningWaker;
let prom: RunningPrometheus;
let ports: { waker: number; alice: number; bob: number };

const MONITORING = path.join(ROOT, 'docs', 'monitoring');
const PROMTOOL = process.env.PROMTOOL_BIN ?? '/usr/bin/promtool';

const one = (v: Sample[]): number => (v.length === 1 ? (v[0]?.value ?? NaN) : NaN);

beforeAll(async () => {
  ports = { waker: await freePort(), alice: await freePort(), bob: await freePort() };
  ({ waker } = await startFleet({
    driver: 'process',
    fleet: FLEET,
    port: ports.waker,
    personas: {
      alice: `PORT=${ports.alice}\nMODE=always-on\n`,
      bob: `PORT=${ports.bob}\nMODE=sleepy\nIDLE_TIMEOUT=600\n`,
    },
    env: { METRICS_INTERVAL: '1', METRICS_WINDOW: '20' },
  }));
  await waker.waitState('alice', ['running'], 90_000);
  prom = await startPrometheus(
    [
      { job: 'fleet', targets: [`127.0.0.1:${ports.waker}`], key: KEY },
      // A persona's port: the front door passes /metrics on to its worker.
      { job: 'persona', targets: [`127.0.0.1:${ports.alice}`], key: KEY },
    ],
    path.join(MONITORING, 'alerts.yml'),
  );
  await prom.until('up', (v) => v.length === 2 && v.every((s) => s.value === 1));
});

afterAll(async () => {
  await prom?.stop();
  await waker?.stop();
});

test('without the key the waker answers 401 at /metrics; with it, the text format', async () => {
  const denied = await call(`${waker.url}/metrics`, { key: null });
  expect(denied).toMatchObject({ status: 401, body: { detail: 'Invalid API key' } });
  const r = await fetch(`${waker.url}/metrics`, { headers: { authorization: `Bearer ${KEY}` } });
  expect(r.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  expect(await r.text()).toContain(`${F}persona_state{`);
});

test('states per persona; a wake through the front door counts a wake, its duration, a request', async () => {
  await prom.until(`${F}persona_state{persona="alice",state="running"}`, (v) => one(v) === 1);
  await prom.until(`${F}persona_state{persona="bob",state="sleeping"}`, (v) => one(v) === 1);
  const wakes = await prom.query(`${F}persona_wakes_total{persona="bob"}`);
  expect(one(wakes)).toBe(0);

  // A call with the key wakes it (a status read would be the waker's answer, waking nothing).
  const r = await fetch(`http://127.0.0.1:${ports.bob}/api/v1/system/process-tree`, {
    headers: { authorization: `Bearer ${KEY}` },
  });
  expect(r.status).toBe(200);
  await prom.until(`${F}persona_wakes_total{persona="bob"}`, (v) => one(v) === 1);
  await prom.until(
    `${F}persona_wake_duration_seconds_count{persona="bob",result="ok"}`,
    (v) => one(v) === 1,
  );
  expect(one(await prom.query(`${F}persona_wake_failures_total{persona="bob"}`))).toBe(0);
  const sum = await prom.query(`${F}persona_wake_duration_seconds_sum{persona="bob"}`);
  expect(sum.some((s) => s.value > 0)).toBe(true);
  await prom.until(
    `${F}front_door_request_duration_seconds_count{persona="bob",status_class="2xx"}`,
    (v) => one(v) >= 1,
  );
  await prom.until(`${F}persona_state{persona="bob",state="running"}`, (v) => one(v) === 1);

  expect((await call(`${waker.url}/api/personas/bob/sleep`, { method: 'POST' })).status).toBe(200);
  await prom.until(`${F}persona_sleeps_total{persona="bob"}`, (v) => one(v) === 1);
});

test("a worker call moves the worker's call count, scraped through the persona's port", async () => {
  const calls = `${W}call_duration_seconds_count{job="persona",route="create-page",status_class="2xx"}`;
  const before = await prom.query(calls);
  expect(before).toEqual([]);
  const created = await fetch(`http://127.0.0.1:${ports.alice}/api/v1/ops/create-page`, {
    method: 'POST',
    headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({ page_id: 'prom' }),
  });
  expect(created.status).toBe(200);
  await prom.until(calls, (v) => one(v) === 1);
  await prom.until(`${W}pages{job="persona",state="idle"}`, (v) => one(v) >= 1);
});

test('an always-on worker killed from outside counts a crash and a restart', async () => {
  expect(one(await prom.query(`${F}persona_crashes_total{persona="alice"}`))).toBe(0);
  const pid = workerPid(FLEET, 'alice');
  expect(pid).not.toBeNull();
  process.kill(pid ?? 0, 'SIGKILL');
  await prom.until(`${F}persona_crashes_total{persona="alice"}`, (v) => one(v) === 1);
  await prom.until(`${F}persona_restarts_total{persona="alice"}`, (v) => one(v) === 1);
  await prom.until(
    `${F}persona_wake_duration_seconds_count{persona="alice",result="ok"}`,
    (v) => one(v) === 2,
    60_000,
  );
  expect(one(await prom.query(`${F}persona_crashes_total{persona="bob"}`))).toBe(0);
});

describe('the dashboard and alert rules in docs/monitoring', () => {
  /** Every PromQL expression of the Grafana dashboard's panels. */
  function dashboardExprs(): string[] {
    const dash = JSON.parse(
      fs.readFileSync(path.join(MONITORING, 'grafana-dashboard.json'), 'utf8'),
    ) as { panels: { targets?: { expr: string }[] }[] };
    return dash.panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr));
  }

  /** The metric names of `exprs` that neither the waker nor a worker exports. */
  async function unexported(exprs: string[]): Promise<string[]> {
    const families = new Set<string>();
    for (const port of [ports.waker, ports.alice]) {
      const r = await fetch(`http://127.0.0.1:${port}/metrics`, {
        headers: { authorization: `Bearer ${KEY}` },
      });
      for (const f of familiesOf(await r.text())) families.add(f);
    }
    return [...new Set(exprs.flatMap(metricNamesIn))].filter((n) => !families.has(n)).sort();
  }

  test('every metric the dashboard and the rules query is exported (and a misspelt one is named)', async () => {
    // The rules as the real Prometheus parsed and evaluated them against the fleet's series.
    const rules = await prom.rules();
    expect(rules.map((r) => r.name).sort()).toEqual([
      'FleetMemoryNearBudget',
      'PersonaCrashLooping',
      'SiteChanged',
      'SleepyPersonaFailingToWake',
    ]);
    const deadline = Date.now() + 15_000;
    while ((await prom.rules()).some((r) => r.health !== 'ok') && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 250));
    expect((await prom.rules()).map((r) => [r.name, r.health, r.lastError ?? ''])).toEqual(
      rules.map((r) => [r.name, 'ok', '']),
    );
    const exprs = [...dashboardExprs(), ...rules.map((r) => r.query)];
    expect(exprs.length).toBeGreaterThan(20);
    expect(await unexported(exprs)).toEqual([]);
    // Control: the same check names a metric no service exports.
    const misspelt = 'sum by (persona) (rate(persona_browser_fleet_persona_wakes_totl[5m]))';
    expect(await unexported([...exprs, misspelt])).toEqual([
      'persona_browser_fleet_persona_wakes_totl',
    ]);
    expect(
      metricNamesIn(
        'histogram_quantile(0.95, sum by (route, le) (rate(persona_browser_worker_call_duration_seconds_bucket{route="x"}[5m])))',
      ),
    ).toEqual(['persona_browser_worker_call_duration_seconds_bucket']);
  });

  test('promtool accepts the rules and the example scrape config; a broken rule it refuses', () => {
    const ok = execFileSync(PROMTOOL, ['check', 'rules', path.join(MONITORING, 'alerts.yml')], {
      encoding: 'utf8',
    });
    expect(ok).toMatch(/SUCCESS: 4 rules found/);
    // The example reads the key from a file: here a scratch one, beside copies of both files.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-promtool-'));
    const keyFile = path.join(dir, 'key');
    fs.writeFileSync(keyFile, KEY);
    fs.copyFileSync(path.join(MONITORING, 'alerts.yml'), path.join(dir, 'alerts.yml'));
    const example = fs
      .readFileSync(path.join(MONITORING, 'prometheus.yml'), 'utf8')
      .replaceAll('/etc/prometheus/persona-browser.key', keyFile);
    fs.writeFileSync(path.join(dir, 'prometheus.yml'), example);
    execFileSync(PROMTOOL, ['check', 'config', path.join(dir, 'prometheus.yml')]);
    // Control: a rule whose expression does not parse fails the check.
    const broken = fs
      .readFileSync(path.join(MONITORING, 'alerts.yml'), 'utf8')
      .replace('[15m]) >= 3', '[15m) >= 3');
    fs.writeFileSync(path.join(dir, 'broken.yml'), broken);
    expect(() =>
      execFileSync(PROMTOOL, ['check', 'rules', path.join(dir, 'broken.yml')], { stdio: 'pipe' }),
    ).toThrow();
    fs.rmSync(dir, { recursive: true, force: true });
  });
});
