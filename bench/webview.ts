// The change request panel's own figures: the built webview bundle (dist/webview.js) in Debian's
// Chromium (playwright-core, the end-to-end suite's flags), under the panel's Content-Security-
// Policy, with a stub `acquireVsCodeApi`, fed a review of 2,000 changes. Prints the time to open
// it (the snapshot message to the first painted frame, and from navigation), the DOM size, and
// the time each interaction takes to reach the screen (median and worst of several).
//   npx tsx bench/webview.ts        (after `node esbuild.config.mjs webview`)
//   BENCH_CHANGES=n                 another number of changes
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { chromium } from 'playwright-core';
import { contentSecurityPolicy, makeNonce } from '../extension/core/webview-html';
import { CHROMIUM_ARGS, CHROMIUM_BIN } from '../test/e2e/harness';
import { largeReviewSnapshot } from '../test/support/review-snapshot';
import { SnapshotEncoder } from '../contract/webview/delta';
import type { ChangeRequestSnapshot } from '../contract/webview/protocol';

const CHANGES = Number(process.env.BENCH_CHANGES ?? 2000);
const ROUNDS = 15;
const ROOT = resolve(__dirname, '..');
const log = (m: string) => process.stderr.write(`[bench:webview] ${m}\n`);

// The variables VS Code gives a webview, with plausible values (the page uses nothing else).
const THEME = `:root {
  --vscode-font-family: system-ui, sans-serif; --vscode-font-size: 13px; --vscode-editor-font-family: monospace; --vscode-editor-font-size: 13px;
  --vscode-foreground: #ccc; --vscode-editor-background: #1e1e1e; --vscode-panel-border: #444; --vscode-descriptionForeground: #999;
  --vscode-button-background: #0e639c; --vscode-button-foreground: #fff; --vscode-button-secondaryBackground: #3a3d41; --vscode-button-secondaryForeground: #ccc;
  --vscode-input-background: #3c3c3c; --vscode-input-foreground: #ccc; --vscode-focusBorder: #007fd4; --vscode-textLink-foreground: #3794ff;
  --vscode-diffEditor-insertedLineBackground: #9bb95533; --vscode-diffEditor-removedLineBackground: #ff000033;
  --vscode-diffEditor-insertedTextBackground: #9ccc2c66; --vscode-diffEditor-removedTextBackground: #ff000066;
}`;

function page(nonce: string): string {
  const csp = contentSecurityPolicy('http://127.0.0.1:*', nonce);
  return `<!DOCTYPE html><html lang="en"><head><meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<link rel="stylesheet" href="/theme.css"><link rel="stylesheet" href="/webview.css"></head>
<body><div id="root"></div>
<script nonce="${nonce}" src="/stub.js"></script>
<script nonce="${nonce}" src="/webview.js"></script></body></html>`;
}

// What VS Code provides: acquireVsCodeApi, here recording what the panel posts; and the bench's
// clock: the time from an action to the frame after it is painted (the page's CSP allows no eval,
// so the actions are functions evaluated by playwright).
// (tsx names the functions it compiles with a __name helper, which the page lacks.)
const STUB = `window.__posted = []; window.__state = undefined; window.__name = (f) => f;
window.acquireVsCodeApi = () => ({ postMessage: (m) => { if (m.type === 'ready' && window.__readyAt === undefined) window.__readyAt = performance.now(); window.__posted.push(m); }, getState: () => window.__state, setState: (s) => { window.__state = s; } });
window.__frame = () => new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
window.__time = async (fn) => { await window.__frame(); const t0 = performance.now(); await fn(); await window.__frame(); return performance.now() - t0; };`;

function serve(): Promise<Server> {
  const nonce = makeNonce();
  const files: Record<string, [string, string]> = {
    '/': ['text/html', page(nonce)],
    '/favicon.ico': ['image/x-icon', ''],
    '/stub.js': ['text/javascript', STUB],
    '/theme.css': ['text/css', THEME],
    '/webview.js': ['text/javascript', readFileSync(join(ROOT, 'dist/webview.js'), 'utf8')],
    '/webview.css': ['text/css', readFileSync(join(ROOT, 'dist/webview.css'), 'utf8')],
  };
  const server = createServer((req, res) => {
    const file = files[(req.url ?? '/').split('?')[0]!];
    if (!file) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'Content-Type': file[0], 'Cache-Control': 'no-store' }).end(file[1]);
  });
  return new Promise((ok) => server.listen(0, '127.0.0.1', () => ok(server)));
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

interface Row {
  what: string;
  median: number;
  worst: number;
  target: number;
}

async function main(): Promise<void> {
  const snapshot: ChangeRequestSnapshot = largeReviewSnapshot(CHANGES);
  const server = await serve();
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  const browser = await chromium.launch({ executablePath: CHROMIUM_BIN, headless: true, args: CHROMIUM_ARGS });
  const rows: Row[] = [];
  try {
    const context = await browser.newContext({ viewport: { width: 1200, height: 800 } });
    const p = await context.newPage();
    const errors: string[] = [];
    p.on('pageerror', (e) => errors.push(String(e)));
    p.on('console', (m) => {
      if (m.type() === 'error') errors.push(m.text());
    });

    // Open: from navigation (the bundle loads and says ready) and from the snapshot message.
    const opens: number[] = [];
    const toReady: number[] = [];
    let nodes = 0;
    let rendered = 0;
    let allNodes = 0;
    const encoder = new SnapshotEncoder();
    for (let i = 0; i < 5; i++) {
      await p.goto(url);
      await p.waitForFunction(() => (window as any).__posted.some((m: { type: string }) => m.type === 'ready'));
      encoder.reset();
      await p.evaluate((m) => {
        (window as any).__snap = m;
      }, encoder.encode(snapshot));
      opens.push(
        await p.evaluate(() =>
          (window as any).__time(async () => {
            window.postMessage({ type: 'loading', changeRequestId: 1 }, '*');
            window.postMessage((window as any).__snap, '*');
            while (!document.querySelector('article.change')) await new Promise((r) => setTimeout(r, 0));
          }),
        ),
      );
      toReady.push(await p.evaluate(() => (window as any).__readyAt as number));
      nodes = await p.evaluate(() => document.getElementsByTagName('*').length);
      allNodes = await p.evaluate(() => {
        const walker = document.createTreeWalker(document, NodeFilter.SHOW_ALL);
        let n = 0;
        while (walker.nextNode()) n += 1;
        return n;
      });
      rendered = await p.evaluate(() => document.querySelectorAll('article.change').length);
    }
    const openNodes = { elements: nodes, all: allNodes };
    rows.push({
      what: `open: snapshot message to painted page (${CHANGES} changes)`,
      median: median(opens),
      worst: Math.max(...opens),
      target: 1000,
    });
    rows.push({
      what: 'load: navigation to the panel saying ready (bundle parsed and run)',
      median: median(toReady),
      worst: Math.max(...toReady),
      target: 1000,
    });

    const measure = async (
      what: string,
      target: number,
      action: (round: number) => Promise<number>,
      prepare?: () => Promise<unknown>,
    ) => {
      const times: number[] = [];
      for (let i = 0; i < ROUNDS; i++) {
        if (prepare) await prepare();
        times.push(await action(i));
      }
      rows.push({ what, median: median(times), worst: Math.max(...times), target });
    };

    await measure('expand or collapse a change', 100, () =>
      p.evaluate(() =>
        (window as any).__time(() => document.querySelector<HTMLElement>('article.change .twisty')!.click()),
      ),
    );
    await measure(
      'open a comment composer',
      100,
      () =>
        p.evaluate(() =>
          (window as any).__time(() =>
            document
              .querySelector<HTMLElement>('article.change button[data-act=open-composer][id^=comment-on-]')
              ?.click(),
          ),
        ),
      () =>
        p.evaluate(() => document.querySelectorAll<HTMLElement>('[data-act=close-composer]').forEach((b) => b.click())),
    );
    await measure('type a character in a composer', 100, () =>
      p.evaluate(() =>
        (window as any).__time(() => {
          const ta = (document.querySelector('textarea[data-draft^="comment:"]') ??
            document.getElementById('ta-review')) as HTMLTextAreaElement;
          ta.focus();
          ta.value += 'x';
          ta.dispatchEvent(new Event('input', { bubbles: true }));
        }),
      ),
    );
    await measure('choose a decision', 100, (round) =>
      p.evaluate(
        (n) =>
          (window as any).__time(() => {
            const r = document.querySelectorAll<HTMLInputElement>('input[name=decision]')[n % 3]!;
            r.checked = true;
            r.dispatchEvent(new Event('change', { bubbles: true }));
          }),
        round,
      ),
    );
    // A refresh as the host sends it: what differs from the last snapshot (see contract/webview/delta.ts).
    await measure('apply a refresh (one change, one comment and a check differ)', 100, async (round) => {
      const next = structuredClone(snapshot);
      next.changes[1]!.modified = { ...next.changes[1]!.modified, status: `status-${round}` };
      next.comments[0] = { ...next.comments[0]!, text: `edited ${round}` };
      next.checks[0] = { ...next.checks[0]!, summary: `run ${round}` };
      const message = encoder.encode(next);
      await p.evaluate((m) => {
        (window as any).__next = m;
      }, message);
      return p.evaluate(() =>
        (window as any).__time(async () => {
          window.postMessage((window as any).__next, '*');
          await new Promise((r) => setTimeout(r, 0));
        }),
      );
    });
    await measure('apply a refresh in which nothing differs', 100, async () => {
      await p.evaluate((m) => {
        (window as any).__next = m;
      }, encoder.encode(snapshot));
      return p.evaluate(() =>
        (window as any).__time(async () => {
          window.postMessage((window as any).__next, '*');
          await new Promise((r) => setTimeout(r, 0));
        }),
      );
    });
    // What a panel that lost track gets: the whole snapshot again (equal to the one shown).
    await measure(`apply a whole snapshot again (${CHANGES} changes, after a resync)`, 100, async () => {
      encoder.reset();
      await p.evaluate((m) => {
        (window as any).__next = m;
      }, encoder.encode(snapshot));
      return p.evaluate(() =>
        (window as any).__time(async () => {
          window.postMessage((window as any).__next, '*');
          await new Promise((r) => setTimeout(r, 0));
        }),
      );
    });
    await measure(
      'scroll by 3,000 px',
      100,
      (round) =>
        p.evaluate(
          (n) =>
            (window as any).__time(async () => {
              window.scrollBy(0, n % 2 ? -3000 : 3000);
              await new Promise((r) => requestAnimationFrame(r));
            }),
          round,
        ),
      () => p.evaluate(() => window.scrollTo(0, document.getElementById('change-list')!.offsetTop + 20_000)),
    );
    await measure('filter the changes (type in the filter box)', 100, (round) =>
      p.evaluate(
        (n) =>
          (window as any).__time(() => {
            const f = document.getElementById('changes-filter') as HTMLInputElement;
            f.value = n % 2 ? '' : 'sw1';
            f.dispatchEvent(new Event('input', { bubbles: true }));
          }),
        round,
      ),
    );
    await measure('collapse all, expand all', 100, (round) =>
      p.evaluate(
        (n) => (window as any).__time(() => document.getElementById(n % 2 ? 'expand-all' : 'collapse-all')!.click()),
        round,
      ),
    );
    await measure(
      'go to a change from the timeline',
      100,
      () =>
        p.evaluate(() =>
          (window as any).__time(() =>
            document.querySelector<HTMLElement>('#timeline [data-act=reveal-change]')?.click(),
          ),
        ),
      () => p.evaluate(() => window.scrollTo(0, 0)),
    );
    nodes = Math.max(nodes, await p.evaluate(() => document.getElementsByTagName('*').length));
    if (errors.length) log(`page errors: ${errors.join(' | ')}`);

    console.log(`\nchange request panel in ${CHROMIUM_BIN} (${CHANGES} changes; ${ROUNDS} rounds per interaction)`);
    console.log('measure'.padEnd(66) + 'median ms'.padStart(11) + 'worst ms'.padStart(10) + '  target');
    for (const r of rows) {
      console.log(
        r.what.padEnd(66) +
          r.median.toFixed(1).padStart(11) +
          r.worst.toFixed(1).padStart(10) +
          `  < ${r.target} ms${r.worst < r.target ? ' (met)' : r.median < r.target ? ' (median met)' : ' (MISSED)'}`,
      );
    }
    console.log(
      `DOM after opening: ${openNodes.elements} elements, ${openNodes.all} nodes in all (${rendered} of ${CHANGES} changes rendered); at most ${nodes} elements during the interactions`,
    );
  } finally {
    await browser.close();
    server.close();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
