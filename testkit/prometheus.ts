import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

/** One sample of Prometheus' text format: `name{labels} value`. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

/** The samples of an exposition (comments skipped). */
export function parseExposition(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    const m = LINE.exec(line);
    if (!m) continue;
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(LABEL)) labels[l[1] ?? ''] = l[2] ?? '';
    out.push({ name: m[1] ?? '', labels, value: Number(m[3]) });
  }
  return out;
}

/** The value of the one sample named `name` whose labels include `labels`; 0 when absent. */
export function valueOf(
  samples: Sample[],
  name: string,
  labels: Record<string, string> = {},
): number {
  const hit = samples.find(
    (s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v),
  );
  return hit?.value ?? 0;
}

/** The metric names (families) an exposition declares in its `# TYPE` lines. */
export function familiesOf(text: string): Set<string> {
  const out = new Set<string>();
  for (const m of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    const [, name = '', type] = m;
    out.add(name);
    if (type === 'histogram' || type === 'summary') {
      for (const suffix of ['_bucket', '_sum', '_count']) out.add(name + suffix);
    }
  }
  return out;
}

const PROMQL_KEYWORDS = new Set([
  'sum',
  'min',
  'max',
  'avg',
  'count',
  'rate',
  'irate',
  'increase',
  'delta',
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'and',
  'or',
  'unless',
  'histogram_quantile',
  'changes',
  'resets',
  'time',
  'clamp_min',
  'clamp_max',
  'abs',
  'topk',
  'bottomk',
  'offset',
  'label_replace',
  'vector',
  'scalar',
  'absent',
  'count_over_time',
  'max_over_time',
  'min_over_time',
  'avg_over_time',
  'sum_over_time',
  'bool',
  'le',
  'deriv',
  'predict_linear',
  'ceil',
  'floor',
  'round',
  'sort',
  'sort_desc',
]);

/**
 * The metric names a PromQL expression reads: identifiers outside braces, label names, strings
 * and durations that are not functions or keywords. Good enough for our own dashboard and rules.
 */
export function metricNamesIn(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, '')
    .replace(/\[[^\]]*\]/g, '')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, '');
  const names = new Set<string>();
  for (const m of bare.matchAll(/[a-zA-Z_:][a-zA-Z0-9_:]*/g)) {
    const word = m[0];
    const next = bare.slice((m.index ?? 0) + word.length).trimStart();
    if (PROMQL_KEYWORDS.has(word) || next.startsWith('(')) continue;
    if (/^\d/.test(word) || /^[0-9.]+[smhdwy]$/.test(word)) continue;
    names.add(word);
  }
  return [...names];
}

/** A free TCP port on loopback (closed again at once). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const address = srv.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

export const PROMETHEUS_BIN = process.env.PROMETHEUS_BIN ?? '/usr/bin/prometheus';

export interface ScrapeJob {
  job: string;
  /** `host:port` */
  targets: string[];
  /** The bearer key Prometheus sends. */
  key: string;
}

export interface RunningPrometheus {
  url: string;
  /** The instant query's vector: each series' labels and value. */
  query(expr: string): Promise<Sample[]>;
  /** Polls `expr` until `ok` holds for its vector, or throws after `timeoutMs`. */
  until(expr: string, ok: (v: Sample[]) => boolean, timeoutMs?: number): Promise<Sample[]>;
  /** Every loaded rule: its name, the query Prometheus parsed, its health and last error. */
  rules(): Promise<RuleState[]>;
  logs: string[];
  stop(): Promise<void>;
}

export interface RuleState {
  name: string;
  query: string;
  health: string;
  lastError?: string;
}

/**
 * Debian's Prometheus with a scrape config of its own (every second, bearer key per job), a
 * scratch TSDB and a free port on loopback.
 */
export async function startPrometheus(
  jobs: ScrapeJob[],
  /** A rule file to load (evaluated every second). */
  ruleFile?: string,
): Promise<RunningPrometheus> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-prometheus-'));
  const config = [
    'global:',
    '  scrape_interval: 1s',
    '  scrape_timeout: 1s',
    '  evaluation_interval: 1s',
    ...(ruleFile ? ['rule_files:', `  - ${JSON.stringify(ruleFile)}`] : []),
    'scrape_configs:',
    ...jobs.flatMap((j) => [
      `  - job_name: ${JSON.stringify(j.job)}`,
      '    authorization:',
      `      credentials: ${JSON.stringify(j.key)}`,
      '    static_configs:',
      `      - targets: ${JSON.stringify(j.targets)}`,
    ]),
  ].join('\n');
  const configFile = path.join(dir, 'prometheus.yml');
  fs.writeFileSync(configFile, `${config}\n`);
  const port = await freePort();
  const proc: ChildProcess = spawn(
    PROMETHEUS_BIN,
    [
      `--config.file=${configFile}`,
      `--storage.tsdb.path=${path.join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const logs: string[] = [];
  proc.stdout?.on('data', (d: Buffer) => logs.push(d.toString()));
  proc.stderr?.on('data', (d: Buffer) => logs.push(d.toString()));
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  const query = async (expr: string): Promise<Sample[]> => {
    const r = await fetch(`${url}/api/v1/query?query=${encodeURIComponent(expr)}`);
    const body = (await r.json()) as {
      status: string;
      error?: string;
      data?: { result: { metric: Record<string, string>; value: [number, string] }[] };
    };
    if (body.status !== 'success') throw new Error(`query ${expr}: ${body.error ?? r.status}`);
    return (body.data?.result ?? []).map((s) => ({
      name: s.metric.__name__ ?? '',
      labels: s.metric,
      value: Number(s.value[1]),
    }));
  };
  const until = async (
    expr: string,
    ok: (v: Sample[]) => boolean,
    timeoutMs = 20_000,
  ): Promise<Sample[]> => {
    const deadline = Date.now() + timeoutMs;
    let last: Sample[] = [];
    for (;;) {
      last = await query(expr);
      if (ok(last)) return last;
      if (Date.now() > deadline)
        throw new Error(`${expr} never held; last: ${JSON.stringify(last)}`);
      await new Promise((r) => setTimeout(r, 250));
    }
  };
  const stop = async (): Promise<void> => {
    if (proc.exitCode === null) proc.kill('SIGTERM');
    await exited;
    fs.rmSync(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 20_000;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`prometheus exited: ${logs.join('')}`);
    const ready = await fetch(`${url}/-/ready`).then(
      (r) => r.ok,
      () => false,
    );
    if (ready) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`prometheus not ready: ${logs.join('')}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  const rules = async (): Promise<RuleState[]> => {
    const r = await fetch(`${url}/api/v1/rules`);
    const body = (await r.json()) as { data?: { groups: { rules: RuleState[] }[] } };
    return (body.data?.groups ?? []).flatMap((g) => g.rules);
  };
  return { url, query, until, rules, logs, stop };
}
