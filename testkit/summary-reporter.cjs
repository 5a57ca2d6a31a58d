/**
 * Prints one plain closing line, `jest: N passed, N failed`, that any CI reader understands,
 * and lists the files that could not run at all (a suite that fails to load counts as failed).
 */
class SummaryReporter {
  onRunComplete(_contexts, results) {
    const broken = results.testResults.filter((r) => r.testExecError).map((r) => r.testFilePath);
    for (const file of broken) process.stdout.write(`suite failed to run: ${file}\n`);
    const failed = results.numFailedTests + broken.length;
    const skipped = results.numPendingTests + results.numTodoTests;
    const tail = skipped ? `, ${skipped} skipped` : '';
    process.stdout.write(`\njest: ${results.numPassedTests} passed, ${failed} failed${tail}\n`);
  }
}
module.exports = SummaryReporter;
