import { networkSection } from './network';
import { formatTable, summaryJson } from './report';
import type { SectionResult } from './report';

/**
 * The network-capture section on its own: `npm run build && node dist/worker/bench/network-run.js`
 * (BENCH_NETWORK_TRIALS, BENCH_NETWORK_MB adjust it). `npm run bench` runs it with the others
 * once it is listed in run.ts.
 */
async function main(): Promise<void> {
  const started = performance.now();
  let result: SectionResult;
  try {
    const rows = await networkSection.run({
      // The section starts its own site; the shared fixture is not used.
      fixture: { url: '', close: async () => undefined },
      progress: (m) => process.stderr.write(`  … ${m}\n`),
    });
    result = { id: networkSection.id, title: networkSection.title, rows, error: null, seconds: 0 };
  } catch (err) {
    const error = err instanceof Error ? (err.stack ?? err.message) : String(err);
    result = { id: networkSection.id, title: networkSection.title, rows: [], error, seconds: 0 };
  }
  result.seconds = (performance.now() - started) / 1000;
  process.stdout.write(`${formatTable([result])}\n\n${summaryJson([result], {})}\n`);
  process.exitCode = result.error ? 1 : 0;
}

void main();
