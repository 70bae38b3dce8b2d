// Mocha's spec reporter, followed by a plain "N passed, N failed" closing line that CI reads.
'use strict';
const Mocha = require('mocha');

class SummaryReporter extends Mocha.reporters.Spec {
  constructor(runner, options) {
    super(runner, options);
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    runner.on(Mocha.Runner.constants.EVENT_TEST_PASS, () => {
      passed += 1;
    });
    runner.on(Mocha.Runner.constants.EVENT_TEST_FAIL, () => {
      failed += 1;
    });
    runner.on(Mocha.Runner.constants.EVENT_TEST_PENDING, () => {
      skipped += 1;
    });
    runner.once(Mocha.Runner.constants.EVENT_RUN_END, () => {
      const tail = skipped > 0 ? `, ${skipped} skipped` : '';
      process.stdout.write(`\n${passed} passed, ${failed} failed${tail}\n`);
    });
  }
}

module.exports = SummaryReporter;
