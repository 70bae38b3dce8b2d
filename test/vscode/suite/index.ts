// Runs inside the extension host: mocha over the compiled suite files.
import Mocha from 'mocha';

export function run(): Promise<void> {
  const mocha = new Mocha({ ui: 'bdd', timeout: 60_000, color: false });
  for (const file of (process.env.CC_VSCODE_TEST_FILES ?? '').split(',').filter(Boolean)) mocha.addFile(file);
  return new Promise((resolve, reject) => {
    mocha.run((failures) => {
      process.stdout.write(`\n${mocha.suite.total() - failures} passed, ${failures} failed\n`);
      if (failures > 0) reject(new Error(`${failures} test(s) failed`));
      else resolve();
    });
  });
}
