// Activates a built extension bundle in fresh Node processes with a fake `vscode` module
// (activation-probe.ts) and returns what each activation took and registered. Used by
// `npm run bench` for the activation time and by the tests that check what activation does.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import * as esbuild from 'esbuild';
import type { ProbeResult } from './activation-probe';

export type { ProbeResult };

const ROOT = resolve(__dirname, '../..');

/**
 * Builds the extension's bundle with the options of esbuild.config.mjs into `dir`; unminified,
 * esbuild's wrapper of each lazily evaluated module keeps its source path as its name (which the
 * probe's --modules reads).
 */
export async function buildExtensionBundle(dir: string, opts: { minify: boolean }): Promise<string> {
  const outfile = join(dir, opts.minify ? 'extension.min.js' : 'extension.js');
  await esbuild.build({
    entryPoints: [join(ROOT, 'extension/extension.ts')],
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    external: ['vscode'],
    minify: opts.minify,
    outfile,
    logLevel: 'warning',
  });
  return outfile;
}

/**
 * Activates `bundle` once per run, each in a new Node process, one after another. With
 * `modules`, each result also lists the bundle's lazily evaluated modules that ran (and slower).
 */
export async function activateInFreshNode(
  bundle: string,
  runs = 1,
  opts: { modules?: boolean } = {},
): Promise<ProbeResult[]> {
  const dir = mkdtempSync(join(tmpdir(), 'cc-activation-'));
  try {
    const probe = join(dir, 'probe.cjs');
    await esbuild.build({
      entryPoints: [join(__dirname, 'activation-probe.ts')],
      bundle: true,
      platform: 'node',
      format: 'cjs',
      target: 'node20',
      outfile: probe,
      logLevel: 'warning',
    });
    const results: ProbeResult[] = [];
    for (let i = 0; i < runs; i += 1) {
      const out = execFileSync(
        process.execPath,
        [probe, resolve(bundle), ROOT, join(dir, 'storage'), ...(opts.modules ? ['--modules'] : [])],
        { cwd: dir, encoding: 'utf8', env: { PATH: process.env.PATH ?? '' } },
      );
      results.push(JSON.parse(out.trim().split('\n').pop()!) as ProbeResult);
    }
    return results;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
