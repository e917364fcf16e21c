// A vitest reporter that ends the run with one plain line, `N passed, N failed, N skipped`, which CI
// reads to know that tests ran (vitest's own summary is not a format it recognises).
export default class SummaryReporter {
  onTestRunEnd(testModules) {
    const counts = { passed: 0, failed: 0, skipped: 0 };
    for (const mod of testModules) {
      for (const test of mod.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') counts.passed += 1;
        else if (state === 'failed') counts.failed += 1;
        else counts.skipped += 1;
      }
    }
    process.stdout.write(`\n${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped\n`);
  }
}
