// The extension's own figures: the size of the built bundles VS Code loads (dist/extension.js and
// the webview's dist/webview.js and .css, minified, with their source maps beside them), and the
// activation time: loading dist/extension.js and calling activate() until it returns, each in a
// fresh Node process with a fake `vscode` module (test/support/activation-probe.ts). The
// extension host in a real VS Code is cross-checked by the end-to-end suite (docs/performance.md).
//   npx tsx bench/extension.ts        (after `node esbuild.config.mjs extension webview`)
//   BENCH_ACTIVATIONS=n               another number of fresh processes (default 15)
import { existsSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { activateInFreshNode } from '../test/support/activation';

const ROOT = resolve(__dirname, '..');
const RUNS = Number(process.env.BENCH_ACTIVATIONS ?? 15);
const BUNDLE_TARGET_KB = 450;
const ACTIVATION_TARGET_MS = 60;

const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;
const size = (file: string) => (existsSync(file) ? statSync(file).size : NaN);

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

async function main(): Promise<void> {
  const bundle = join(ROOT, 'dist/extension.js');
  if (!existsSync(bundle))
    throw new Error('dist/extension.js is missing: run `node esbuild.config.mjs extension webview` first');

  console.log('\nextension bundles (minified; source maps beside them, not loaded)');
  for (const file of ['extension.js', 'webview.js', 'webview.css']) {
    const bytes = size(join(ROOT, 'dist', file));
    const target =
      file === 'extension.js'
        ? `  target ≤ ${BUNDLE_TARGET_KB} KB${bytes <= BUNDLE_TARGET_KB * 1024 ? ' (met)' : ' (MISSED)'}`
        : '';
    console.log(
      `${`dist/${file}`.padEnd(22)}${kb(bytes).padStart(10)}   map ${kb(size(join(ROOT, 'dist', `${file}.map`))).padStart(10)}${target}`,
    );
  }

  const results = await activateInFreshNode(bundle, RUNS);
  const failed = results.find((r) => r.error);
  if (failed) throw new Error(`activation failed: ${failed.error}`);
  const column = (pick: (r: (typeof results)[number]) => number) => results.map(pick).sort((a, b) => a - b);
  const load = column((r) => r.loadMs);
  const activate = column((r) => r.activateMs);
  const total = column((r) => r.loadMs + r.activateMs);
  const median = quantile(total, 0.5);
  console.log(`\nactivation in ${process.execPath} ${process.version} (fake vscode; ${RUNS} fresh processes)`);
  console.log('measure'.padEnd(44) + 'median ms'.padStart(11) + 'worst ms'.padStart(10) + '  target');
  console.log(
    'load the bundle (read, compile, top level)'.padEnd(44) +
      quantile(load, 0.5).toFixed(1).padStart(11) +
      load.at(-1)!.toFixed(1).padStart(10),
  );
  console.log(
    'activate() until it returns'.padEnd(44) +
      quantile(activate, 0.5).toFixed(1).padStart(11) +
      activate.at(-1)!.toFixed(1).padStart(10),
  );
  console.log(
    'load + activate'.padEnd(44) +
      median.toFixed(1).padStart(11) +
      total.at(-1)!.toFixed(1).padStart(10) +
      `  ≤ ${ACTIVATION_TARGET_MS} ms${median <= ACTIVATION_TARGET_MS ? ' (met)' : ' (MISSED)'}`,
  );
  const sync = results.flatMap((r) => r.syncWork);
  console.log(`synchronous file, process or network calls in activate(): ${sync.length ? sync.join(', ') : 'none'}`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
