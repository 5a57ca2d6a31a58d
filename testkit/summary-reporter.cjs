/**
 * Prints one plain closing line, `jest: N passed, N failed`, that any CI reader understands,
 * and lists the files that could not run at all (a suite that fails to load counts as failed).
 * Before it, the slowest files with their seconds: a CI log is often read only at its end, and
 * that is where the run's time budget is seen to go. Under scripts/test-lanes.cjs
 * (JEST_TIMINGS_OUT set) it writes the same figures to that file instead, and the lanes' runner
 * prints them for the whole run.
 */
const fs = require('node:fs');
const path = require('node:path');
const { stripVTControlCharacters } = require('node:util');

const SLOWEST = 10;
/** Lines of each failure's message kept for the closing list. */
const FAILURE_LINES = 6;

/**
 * Each failed test as `file › test name`, with the first lines of its message: a CI log is often
 * read only at its end, and when lanes run side by side a lane's own summary is far above it.
 */
function failuresOf(results) {
  return results.testResults.flatMap((file) =>
    file.testResults
      .filter((t) => t.status === 'failed')
      .map((t) => ({
        test: `${path.relative(process.cwd(), file.testFilePath)} › ${t.fullName}`,
        message: stripVTControlCharacters(t.failureMessages.join('\n'))
          .split('\n')
          .map((l) => l.trim())
          .filter(Boolean)
          .slice(0, FAILURE_LINES),
      })),
  );
}

class SummaryReporter {
  onRunComplete(_contexts, results) {
    const timed = results.testResults
      .map((r) => ({ file: r.testFilePath, s: (r.perfStats.end - r.perfStats.start) / 1000 }))
      .filter((t) => Number.isFinite(t.s) && t.s > 0)
      .sort((a, b) => b.s - a.s);
    const broken = results.testResults.filter((r) => r.testExecError).map((r) => r.testFilePath);
    const failed = results.numFailedTests + broken.length;
    const skipped = results.numPendingTests + results.numTodoTests;
    const out = process.env.JEST_TIMINGS_OUT;
    if (out) {
      const files = timed.map((t) => ({ file: path.relative(process.cwd(), t.file), s: t.s }));
      const passed = results.numPassedTests;
      const unrun = broken.map((f) => path.relative(process.cwd(), f));
      const failures = failuresOf(results);
      fs.writeFileSync(
        out,
        JSON.stringify({ files, passed, failed, skipped, broken: unrun, failures }),
      );
      return;
    }
    if (timed.length) {
      const total = timed.reduce((acc, t) => acc + t.s, 0);
      process.stdout.write(`\nslowest files (of ${Math.round(total)} s in ${timed.length}):\n`);
      for (const t of timed.slice(0, SLOWEST)) {
        const file = path.relative(process.cwd(), t.file);
        process.stdout.write(`  ${t.s.toFixed(1).padStart(7)} s  ${file}\n`);
      }
    }
    for (const file of broken) process.stdout.write(`suite failed to run: ${file}\n`);
    for (const f of failuresOf(results)) printFailure(f);
    const tail = skipped ? `, ${skipped} skipped` : '';
    process.stdout.write(`\njest: ${results.numPassedTests} passed, ${failed} failed${tail}\n`);
  }
}

/** One failed test, as the closing lines list it. */
function printFailure(f) {
  process.stdout.write(`failed: ${f.test}\n`);
  for (const line of f.message) process.stdout.write(`    ${line}\n`);
}
module.exports = SummaryReporter;
module.exports.printFailure = printFailure;
