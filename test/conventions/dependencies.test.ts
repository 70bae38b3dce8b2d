// The import rules of the architecture (.dependency-cruiser.cjs): no cycles, type-only imports
// included; the contract imports no part; the extension and the webview meet only in the
// contract; vscode stays at the extension's edges; in the service, the host imports no plugin,
// plugins reach the host and each other only through their public modules, and domain modules
// import nothing of HTTP. A violation fails here, and so fails CI.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { join, resolve } from 'node:path';

const ROOT = resolve(__dirname, '../..');

interface Violation {
  from: string;
  to: string;
  rule: { name: string; severity: string };
  cycle?: Array<{ name: string }>;
}

function cruise(extra: string[] = []): { violations: Violation[]; modules: number } {
  const out = execFileSync(
    process.execPath,
    [
      join(ROOT, 'node_modules/dependency-cruiser/bin/dependency-cruise.mjs'),
      '--config',
      '.dependency-cruiser.cjs',
      ...extra,
      '--output-type',
      'json',
      'contract',
      'launch',
      'server',
      'extension',
      'webview',
    ],
    { cwd: ROOT, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
  );
  const result = JSON.parse(out) as { summary: { violations: Violation[]; totalCruised: number } };
  return { violations: result.summary.violations, modules: result.summary.totalCruised };
}

function describeViolation(v: Violation): string {
  const path = v.cycle ? [v.from, ...v.cycle.map((c) => c.name)].join(' → ') : `${v.from} → ${v.to}`;
  return `${v.rule.name}: ${path}`;
}

describe('architecture: import rules (dependency-cruiser)', function () {
  this.timeout(60_000);

  it('finds no import that breaks a rule', () => {
    const { violations, modules } = cruise();
    assert.ok(modules > 100, `cruised only ${modules} modules: is TypeScript resolved?`);
    assert.deepEqual(violations.map(describeViolation), []);
  });
});
