// Proves the harness alone, on throwaway extensions: `npx tsx test/e2e/smoke.ts`.
import { main } from './suite';
import { scenarios } from './scenarios/00-smoke';

main(scenarios).then(
  (code) => process.exit(code),
  (e) => {
    process.stderr.write(`[e2e] ${e instanceof Error ? e.stack : String(e)}\n0 passed, 1 failed\n`);
    process.exit(1);
  },
);
