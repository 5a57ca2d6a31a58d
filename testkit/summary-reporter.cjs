/**
 * Prints one plain closing line, `jest: N passed, N failed`, that any CI reader understands,
 * and lists the files that could not run at all (a suite that fails to load counts as failed).
 * Before it, the slowest files with their seconds: a CI log is often read only at its end, and
 * that is where the run's time budget is seen to go.
 */
const path = require('node:path');

const SLOWEST = 12;

class SummaryReporter {
  onRunComplete(_contexts, results) {
    const timed = results.testResults
      .map((r) => ({ file: r.testFilePath, s: (r.perfStats.end - r.perfStats.start) / 1000 }))
      .filter((t) => Number.isFinite(t.s) && t.s > 0)
      .sort((a, b) => b.s - a.s);
    if (timed.length) {
      const total = timed.reduce((acc, t) => acc + t.s, 0);
      process.stdout.write(`\nslowest files (of ${Math.round(total)} s in ${timed.length}):\n`);
      for (const t of timed.slice(0, SLOWEST)) {
        const file = path.relative(process.cwd(), t.file);
        process.stdout.write(`  ${t.s.toFixed(1).padStart(7)} s  ${file}\n`);
      }
    }
    const broken = results.testResults.filter((r) => r.testExecError).map((r) => r.testFilePath);
    for (const file of broken) process.stdout.write(`suite failed to run: ${file}\n`);
    const failed = results.numFailedTests + broken.length;
    const skipped = results.numPendingTests + results.numTodoTests;
    const tail = skipped ? `, ${skipped} skipped` : '';
    process.stdout.write(`\njest: ${results.numPassedTests} passed, ${failed} failed${tail}\n`);
  }
}
module.exports = SummaryReporter;
