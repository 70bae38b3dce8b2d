// Entry point of the end-to-end suite: `npx tsx test/e2e/run.ts [name-filter ...]`
// (normally through test/e2e/run.sh, which installs the tools first).
import { loadScenarios, main } from './suite';

loadScenarios(process.argv.slice(2))
  .then(main)
  .then(
    (code) => process.exit(code),
    (e) => {
      process.stderr.write(`[e2e] ${e instanceof Error ? e.stack : String(e)}\n0 passed, 1 failed\n`);
      process.exit(1);
    },
  );
