// Runs end-to-end scenarios against one VS Code instance.
//
// A scenario is a module in test/e2e/scenarios/ whose default export (or `scenario` export) is
// a Scenario. Every scenario's prepare() runs first (it may write files into the workspace, add
// extensions, user settings and environment for the extension host); then VS Code starts once,
// and each scenario's run() is called in file-name order with a clean UI in between.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ARTIFACTS_DIR, VSCode, type ExtensionSource } from './harness';

export interface Prep {
  /** The folder VS Code opens (already created; write fixture files here). */
  readonly workspace: string;
  /** A temp folder for this run (removed afterwards). */
  readonly tempDir: string;
  addExtension(src: ExtensionSource): void;
  setting(key: string, value: unknown): void;
  /** A setting of the machine the extension host runs on (needed for `"scope": "machine"` settings). */
  machineSetting(key: string, value: unknown): void;
  env(key: string, value: string): void;
  /** Called after the whole run, even on failure (stop services the scenario started). */
  onCleanup(fn: () => Promise<void> | void): void;
}

export interface ScenarioContext {
  readonly vscode: VSCode;
  readonly workspace: string;
  readonly tempDir: string;
  /** Screenshot named after the scenario and `label`; returns its path. */
  screenshot(label: string): Promise<string>;
  log(line: string): void;
}

export interface Scenario {
  name: string;
  /** Per-scenario limit for run(), ms (default 180 s). */
  timeoutMs?: number;
  prepare?(prep: Prep): Promise<void> | void;
  run(ctx: ScenarioContext): Promise<void>;
}

export interface SuiteResult {
  passed: number;
  failed: number;
  failures: { name: string; error: string }[];
}

const SCENARIO_DIR = path.join(__dirname, 'scenarios');

/** Loads test/e2e/scenarios/*.ts in name order; `filters` keep those whose name or file contains one. */
export async function loadScenarios(filters: string[] = []): Promise<Scenario[]> {
  const files = fs
    .readdirSync(SCENARIO_DIR)
    .filter((f) => /\.ts$/.test(f) && !f.endsWith('.d.ts'))
    .sort();
  const out: Scenario[] = [];
  for (const f of files) {
    const mod = await import(path.join(SCENARIO_DIR, f));
    // CommonJS modules imported from ESM show up under `default`: look at both levels.
    const found = new Set<Scenario>();
    for (const m of [mod, mod.default]) {
      if (!m || typeof m !== 'object') continue;
      for (const s of [m.default, m.scenario, ...(Array.isArray(m.scenarios) ? m.scenarios : [])]) {
        if (s && typeof s.name === 'string' && typeof s.run === 'function') found.add(s as Scenario);
      }
    }
    if (found.size === 0) throw new Error(`${f}: exports no scenario (default, \`scenario\` or \`scenarios\`)`);
    for (const s of found) {
      if (filters.length === 0 || filters.some((x) => s.name.includes(x) || f.includes(x))) out.push(s);
    }
  }
  return out;
}

function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: timed out after ${ms} ms`)), ms);
  });
  return Promise.race([p, limit]).finally(() => clearTimeout(timer));
}

export async function runSuite(scenarios: Scenario[], opts: { artifactsDir?: string } = {}): Promise<SuiteResult> {
  const log = (l: string) => process.stdout.write(`[e2e] ${l}\n`);
  const artifactsDir = path.resolve(opts.artifactsDir ?? ARTIFACTS_DIR);
  fs.rmSync(artifactsDir, { recursive: true, force: true });
  fs.mkdirSync(artifactsDir, { recursive: true });
  const result: SuiteResult = { passed: 0, failed: 0, failures: [] };
  const fail = (name: string, e: unknown) => {
    const msg = e instanceof Error ? e.message : String(e);
    result.failed += 1;
    result.failures.push({ name, error: msg });
    log(`FAIL ${name}: ${msg}`);
  };

  const tempDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cc-e2e-suite-'));
  const workspace = path.join(tempDir, 'workspace');
  fs.mkdirSync(workspace, { recursive: true });
  const extensions: ExtensionSource[] = [];
  const userSettings: Record<string, unknown> = {};
  const machineSettings: Record<string, unknown> = {};
  const env: Record<string, string> = {};
  const cleanups: (() => Promise<void> | void)[] = [];
  const prep: Prep = {
    workspace,
    tempDir,
    // Several scenarios may add the same extension (each must work when run alone): install it once.
    addExtension: (src) => {
      const same = (e: ExtensionSource) => JSON.stringify(e) === JSON.stringify(src);
      if (!extensions.some(same)) extensions.push(src);
    },
    setting: (k, v) => {
      userSettings[k] = v;
    },
    machineSetting: (k, v) => {
      machineSettings[k] = v;
    },
    env: (k, v) => {
      env[k] = v;
    },
    onCleanup: (fn) => cleanups.push(fn),
  };

  let vscode: VSCode | undefined;
  const stopAll = async () => {
    if (vscode) await vscode.stop().catch((e) => log(`stop: ${(e as Error).message}`));
    vscode = undefined;
    for (const fn of cleanups.reverse())
      await Promise.resolve()
        .then(fn)
        .catch((e) => log(`cleanup: ${(e as Error).message}`));
    cleanups.length = 0;
    if (process.env.CC_E2E_KEEP !== '1') fs.rmSync(tempDir, { recursive: true, force: true });
  };
  const onSignal = (sig: NodeJS.Signals) => {
    log(`${sig}: stopping`);
    void stopAll().finally(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);

  try {
    const runnable: Scenario[] = [];
    for (const s of scenarios) {
      try {
        const t0 = Date.now();
        await s.prepare?.(prep);
        if (s.prepare) log(`prepared ${s.name} in ${Date.now() - t0} ms`);
        runnable.push(s);
      } catch (e) {
        fail(
          s.name,
          new Error(`prepare: ${(e as Error).message}${(e as Error).cause ? ` (${String((e as Error).cause)})` : ''}`),
        );
      }
    }
    if (runnable.length === 0) return result;

    const t0 = Date.now();
    try {
      vscode = await VSCode.start({ workspace, extensions, userSettings, machineSettings, env, artifactsDir });
    } catch (e) {
      for (const s of runnable) fail(s.name, new Error(`VS Code did not start: ${(e as Error).message}`));
      return result;
    }
    log(`VS Code ready in ${Date.now() - t0} ms`);
    await vscode.screenshot('workbench-ready');

    for (const s of runnable) {
      const started = Date.now();
      log(`RUN  ${s.name}`);
      const ctx: ScenarioContext = {
        vscode,
        workspace,
        tempDir,
        screenshot: (label) => vscode!.screenshot(`${s.name}-${label}`),
        log: (l) => log(`  ${s.name}: ${l}`),
      };
      vscode.label = s.name;
      try {
        await vscode.resetUi();
        await withTimeout(s.run(ctx), s.timeoutMs ?? 180_000, s.name);
        result.passed += 1;
        log(`PASS ${s.name} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
      } catch (e) {
        if (!(e instanceof Error && /screenshot: /.test(e.message))) {
          const shot = await vscode.screenshot(`FAIL-${s.name}`).catch(() => undefined);
          if (shot && e instanceof Error) e.message += `\n  screenshot: ${shot}`;
        }
        fail(s.name, e);
      }
    }
  } finally {
    await stopAll();
    process.removeListener('SIGINT', onSignal);
    process.removeListener('SIGTERM', onSignal);
  }
  return result;
}

/** Runs scenarios and prints the closing `N passed, N failed` line; returns the exit code. */
export async function main(scenarios: Scenario[]): Promise<number> {
  const t0 = Date.now();
  if (scenarios.length === 0) {
    process.stdout.write('[e2e] no scenario selected\n0 passed, 1 failed\n');
    return 1;
  }
  const r = await runSuite(scenarios);
  process.stdout.write(
    `[e2e] ${scenarios.length} scenario(s) in ${((Date.now() - t0) / 1000).toFixed(1)} s; artifacts in ${path.relative(process.cwd(), ARTIFACTS_DIR) || '.'}\n`,
  );
  for (const f of r.failures) process.stdout.write(`[e2e] failed: ${f.name}\n`);
  process.stdout.write(`${r.passed} passed, ${r.failed} failed\n`);
  return r.failed === 0 && r.passed > 0 ? 0 : 1;
}
