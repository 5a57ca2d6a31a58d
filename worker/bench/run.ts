import os from 'node:os';
import { contentProfileSection } from './content-profile';
import { startFixture } from './fixture';
import type { Fixture } from './fixture';
import { latencySection } from './latency';
import { evasionsSection } from './evasions';
import { memorySection } from './memory';
import { networkSection } from './network';
import { opsRatioSection } from './ops-ratio';
import { qrSection } from './qr';
import { recordingSection } from './recording';
import { formatTable, summaryJson } from './report';
import type { SectionResult } from './report';
import type { BenchContext, BenchSection } from './section';
import { stopAll } from './spawn';
import { startupSection } from './startup';

/**
 * `npm run bench`: runs every section against the built worker on this machine and prints a
 * table with the targets beside each figure, then a one-line JSON summary. Figures are
 * printed, never asserted. BENCH_SECTIONS=startup,latency runs a subset.
 */

const round2 = (n: number): number => Math.round(n * 100) / 100;

const SECTIONS: BenchSection[] = [
  startupSection,
  latencySection,
  opsRatioSection,
  contentProfileSection,
  memorySection,
  networkSection,
  evasionsSection,
  qrSection,
  recordingSection,
];

function selected(): BenchSection[] {
  const only = process.env.BENCH_SECTIONS?.split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (!only?.length) return SECTIONS;
  const unknown = only.filter((id) => !SECTIONS.some((s) => s.id === id));
  if (unknown.length) {
    throw new Error(
      `unknown BENCH_SECTIONS ${unknown.join(', ')}; known: ${SECTIONS.map((s) => s.id).join(', ')}`,
    );
  }
  return SECTIONS.filter((s) => only.includes(s.id));
}

async function main(): Promise<number> {
  const sections = selected();
  const loadBefore = os.loadavg()[0] ?? 0;
  const startedAt = performance.now();
  let fixture: Fixture | null = null;
  const results: SectionResult[] = [];
  let interruptedBy: NodeJS.Signals | null = null;
  const interrupted = (signal: NodeJS.Signals): void => {
    interruptedBy = signal;
    process.stderr.write(`bench: ${signal}, stopping workers\n`);
    void Promise.all([stopAll(true), fixture?.close()]).finally(() => process.exit(130));
  };
  process.once('SIGINT', interrupted);
  process.once('SIGTERM', interrupted);
  // A stray error from a client library must not leave browsers behind either.
  process.once('uncaughtException', (err) => {
    process.stderr.write(`bench: uncaught ${err.stack ?? err.message}\n`);
    void Promise.all([stopAll(true), fixture?.close()]).finally(() => process.exit(1));
  });
  try {
    fixture = await startFixture();
    const ctx: BenchContext = {
      fixture,
      progress: (m) => process.stderr.write(`  … ${m}\n`),
    };
    for (const section of sections) {
      if (interruptedBy) break;
      process.stderr.write(`bench: ${section.id}\n`);
      const t0 = performance.now();
      let result: SectionResult;
      try {
        const rows = await section.run(ctx);
        result = { id: section.id, title: section.title, rows, error: null, seconds: 0 };
      } catch (err) {
        const error = err instanceof Error ? (err.stack ?? err.message) : String(err);
        process.stderr.write(`bench: section ${section.id} failed: ${error}\n`);
        result = { id: section.id, title: section.title, rows: [], error, seconds: 0 };
        await stopAll();
      }
      result.seconds = (performance.now() - t0) / 1000;
      results.push(result);
    }
  } finally {
    await stopAll(true);
    await fixture?.close();
  }
  const seconds = (performance.now() - startedAt) / 1000;
  const cpu = os.cpus()[0]?.model ?? 'unknown cpu';
  const meta = {
    bench: 'persona-browser',
    date: new Date().toISOString(),
    host: {
      cpus: os.cpus().length,
      cpu,
      mem_gb: Math.round(os.totalmem() / 2 ** 30),
      node: process.version,
    },
    seconds: Math.round(seconds),
    loadavg_1m: { start: round2(loadBefore), end: round2(os.loadavg()[0] ?? 0) },
  };
  process.stdout.write(
    `\npersona-browser benchmark — ${meta.host.cpus} × ${cpu}, node ${process.version}, ${seconds.toFixed(0)} s\n` +
      `1-min load average ${meta.loadavg_1m.start} at start, ${meta.loadavg_1m.end} at end (other work on the machine skews the figures).\n` +
      'Medians over repeated runs on this machine; "met" compares with the target, nothing is asserted.\n\n',
  );
  process.stdout.write(`${formatTable(results)}\n\nJSON summary:\n${summaryJson(results, meta)}\n`);
  return results.some((r) => r.error) ? 1 : 0;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  async (err: unknown) => {
    process.stderr.write(
      `bench: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
    );
    await stopAll();
    process.exitCode = 1;
  },
);
