// Builds the three bundles: the companion service, the VS Code extension and the webview. The
// extension and the webview are minified, with source maps beside them.
//   node esbuild.config.mjs                 build everything
//   node esbuild.config.mjs server          build one target (server, extension, webview)
//   node esbuild.config.mjs --if-needed X   build X only when its bundle is older than its sources
import * as esbuild from 'esbuild';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const targets = {
  server: {
    entryPoints: { server: 'server/main.ts' },
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    external: ['better-sqlite3'],
    sources: ['server', 'contract'],
  },
  extension: {
    entryPoints: { extension: 'extension/extension.ts' },
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    external: ['vscode'],
    minify: true,
    sources: ['extension', 'contract'],
  },
  webview: {
    entryPoints: { webview: 'webview/main.ts' },
    platform: 'browser',
    format: 'iife',
    target: 'es2022',
    minify: true,
    sources: ['webview', 'contract'],
  },
};

function newestMtime(dir) {
  if (!existsSync(dir)) return 0;
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs);
  }
  return newest;
}

function isUpToDate(name, target) {
  const out = join('dist', `${name}.js`);
  if (!existsSync(out)) return false;
  const built = statSync(out).mtimeMs;
  return target.sources.every((dir) => newestMtime(dir) <= built);
}

const args = process.argv.slice(2);
const ifNeeded = args.includes('--if-needed');
const wanted = args.filter((a) => !a.startsWith('--'));
const names = wanted.length > 0 ? wanted : Object.keys(targets);

for (const name of names) {
  const target = targets[name];
  if (!target) {
    console.error(`unknown build target "${name}" (expected one of: ${Object.keys(targets).join(', ')})`);
    process.exit(2);
  }
  if (ifNeeded && isUpToDate(name, target)) continue;
  const { sources, ...options } = target;
  if (!existsSync(Object.values(options.entryPoints)[0])) continue;
  await esbuild.build({
    ...options,
    bundle: true,
    outdir: 'dist',
    sourcemap: true,
    logLevel: 'warning',
  });
}
