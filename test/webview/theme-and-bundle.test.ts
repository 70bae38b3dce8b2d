import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import * as esbuild from 'esbuild';

const ROOT = resolve(__dirname, '../..');

describe('webview: theme colours and bundle', () => {
  it("uses only the theme's colours (var(--vscode-*)), never literal ones", () => {
    const css = readFileSync(join(ROOT, 'webview/styles.css'), 'utf8').replace(/\/\*[\s\S]*?\*\//g, '');
    assert.doesNotMatch(css, /#[0-9a-f]{3,8}\b/i, 'hex colour');
    assert.doesNotMatch(css, /\b(rgba?|hsla?|hwb|lab|lch|oklab|oklch|color-mix)\(/i, 'colour function');
    const colourProps =
      /(^|[;{\s])((?:background|color|border(?:-[a-z]+)?|outline(?:-color)?|fill|stroke)(?:-color)?)\s*:\s*([^;}]+)/g;
    const named = /\b(white|black|red|green|blue|yellow|orange|purple|gray|grey|pink|silver|navy|teal)\b/i;
    let checked = 0;
    for (const m of css.matchAll(colourProps)) {
      checked += 1;
      const value = m[3].replace(/var\(--vscode-[A-Za-z0-9-]+(?:,\s*var\(--vscode-[A-Za-z0-9-]+\))?\)/g, '');
      assert.doesNotMatch(value, named, `${m[2]}: ${m[3]}`);
      assert.doesNotMatch(value, /var\(--(?!vscode-)/, `${m[2]}: ${m[3]}`);
    }
    assert.ok(checked > 20, `only ${checked} colour declarations found`);
  });

  it('shows keyboard focus visibly', () => {
    const css = readFileSync(join(ROOT, 'webview/styles.css'), 'utf8');
    assert.match(css, /:focus-visible[^{]*\{[^}]*outline: 1px solid var\(--vscode-focusBorder\)/);
  });

  it('bundles the webview without zod or anything that reaches the network', async () => {
    const result = await esbuild.build({
      entryPoints: [join(ROOT, 'webview/main.ts')],
      bundle: true,
      platform: 'browser',
      format: 'iife',
      write: false,
      metafile: true,
      outdir: '/tmp/cc-webview-check',
      logLevel: 'silent',
    });
    const inputs = Object.keys(result.metafile.inputs);
    assert.ok(
      !inputs.some((i) => i.includes('node_modules/zod/')),
      'zod is in the webview bundle: import contract types with `import type` only',
    );
    const js = result.outputFiles.find((f) => f.path.endsWith('.js'))!.text;
    assert.doesNotMatch(js, /\bfetch\(|XMLHttpRequest|new WebSocket\(|EventSource\(/);
  });
});
