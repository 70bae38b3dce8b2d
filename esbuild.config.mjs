// Builds the three bundles: the companion service, the VS Code extension and the webview. The
// extension and the webview are minified, with source maps beside them.
//   node esbuild.config.mjs                 build everything
//   node esbuild.config.mjs server          build one target (server, extension, webview)
//   node esbuild.config.mjs --if-needed X   build X only when its bundle is older than its sources
import * as esbuild from 'esbuild';
import { existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const targets = {
  server: {
    entryPoints: { server: 'server/main.ts' },
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    external: ['better-sqlite3'],
    asciiOnly: true,
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

/**
 * The bundle's text with every character outside ASCII written as a `\u` escape. V8 keeps the
 * source of every script for as long as the process runs, at one byte per character when all
 * of them are Latin-1 and two bytes otherwise: the service's 3.9 MB bundle held 7.9 MB of heap
 * because of a few dozen characters. esbuild escapes strings, templates and names itself (its
 * default `charset: 'ascii'`); what it leaves are comments and regular expression literals, where
 * an escape means the same character. A backslash before such a character (an identity escape)
 * is dropped with it. Not for bundles with non-ASCII text in a tagged template's raw strings.
 */
export function asciiOnly(code) {
  return code.replace(
    /(\\*)([^\x00-\x7f])/g,
    (_, slashes, c) =>
      (slashes.length % 2 ? slashes.slice(1) : slashes) + `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/** Builds one target into `outdir`. */
export async function buildTarget(name, outdir = 'dist') {
  const { sources, asciiOnly: ascii, ...options } = targets[name];
  if (!existsSync(Object.values(options.entryPoints)[0])) return;
  const result = await esbuild.build({
    ...options,
    bundle: true,
    outdir,
    sourcemap: true,
    logLevel: 'warning',
    write: false,
  });
  for (const file of result.outputFiles) {
    mkdirSync(dirname(file.path), { recursive: true });
    writeFileSync(file.path, ascii && file.path.endsWith('.js') ? asciiOnly(file.text) : file.contents);
  }
}

async function main() {
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
    await buildTarget(name);
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await main();
