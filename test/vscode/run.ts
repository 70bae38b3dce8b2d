// Opt-in suite inside a real VS Code (Electron) with @vscode/test-electron:
//   VSCODE_BINARY=/path/to/code npm run test:vscode
// It never downloads VS Code: without VSCODE_BINARY it stops with a message. The suite files are
// compiled with esbuild into .cache/vscode-tests/ (so that `mocha` resolves from node_modules).
import { mkdtempSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import * as esbuild from 'esbuild';
import { runTests } from '@vscode/test-electron';

const ROOT = resolve(__dirname, '../..');

async function main(): Promise<number> {
  const binary = process.env.VSCODE_BINARY;
  if (!binary) {
    process.stderr.write(
      'test:vscode needs a VS Code binary: set VSCODE_BINARY=/path/to/code (nothing is downloaded).\n0 passed, 1 failed\n',
    );
    return 1;
  }
  if (!existsSync(binary)) {
    process.stderr.write(`VSCODE_BINARY=${binary} does not exist.\n0 passed, 1 failed\n`);
    return 1;
  }
  if (!existsSync(join(ROOT, 'dist', 'extension.js'))) {
    process.stderr.write('dist/extension.js is missing: run npm run build.\n0 passed, 1 failed\n');
    return 1;
  }
  const outDir = join(ROOT, '.cache', 'vscode-tests');
  rmSync(outDir, { recursive: true, force: true });
  await esbuild.build({
    entryPoints: [join(__dirname, 'suite', 'index.ts'), join(__dirname, 'suite', 'extension.test.ts')],
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    outdir: outDir,
    external: ['vscode', 'mocha'],
    logLevel: 'warning',
  });
  const temp = mkdtempSync(join(tmpdir(), 'cc-vscode-'));
  try {
    await runTests({
      vscodeExecutablePath: binary,
      extensionDevelopmentPath: ROOT,
      extensionTestsPath: join(outDir, 'index.js'),
      extensionTestsEnv: { CC_VSCODE_TEST_FILES: join(outDir, 'extension.test.js') },
      launchArgs: [
        join(temp, 'workspace'),
        '--user-data-dir',
        join(temp, 'user-data'),
        '--extensions-dir',
        join(temp, 'extensions'),
        '--disable-workspace-trust',
        '--skip-welcome',
        '--skip-release-notes',
      ],
    });
    return 0;
  } catch (e) {
    process.stderr.write(`${e instanceof Error ? e.message : String(e)}\n`);
    return 1;
  } finally {
    rmSync(temp, { recursive: true, force: true });
  }
}

main().then((code) => process.exit(code));
