// One .vsix for every platform, nothing to install: the packaged extension installed into a
// profile of its own whose PATH holds no `node` (code-server itself started by the absolute path
// of its Node 24), with no setting at all. Its bundled service runs on the editor's own runtime
// with Node's built-in SQLite, on a database seeded beforehand (test/extension/seed.ts, written
// by the project's Node through better-sqlite3: the file is the same for both drivers); bob, the
// seeded reviewer, signs in to it with his token, finds the request waiting for him and approves
// it on the review page.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { assertEqual, expectText, NODE24_BIN, VSCode } from '../harness';
import { projectExtensionVsix } from '../fixtures/project-extension';
import { pathWithoutNode } from '../fixtures/path-without-node';
import type { Scenario } from '../suite';
import { seedWorld } from '../../extension/seed';
import { startService } from '../../support/service';
import { processSqliteDriver } from '../../../server/host/db/sqlite-driver-choice';

const VIEW = 'Change Requests';
const TITLE = 'Move sw1 to rack R2';
/** Where the extension keeps the bundled service's database (its global storage). */
const DATABASE = path.join('User', 'globalStorage', 'change-control.change-control', 'change-control.sqlite3');

let vsix = '';
let seededFile = '';
let reviewerToken = '';
let requestId = 0;

export const scenario: Scenario = {
  name: "one .vsix, nothing to install: with no node on PATH the bundled service runs on the editor's runtime, and the reviewer approves a request",
  timeoutMs: 360_000,
  async prepare(prep) {
    vsix = projectExtensionVsix(prep.tempDir);
    const dir = path.join(prep.tempDir, 'no-node-seed');
    fs.mkdirSync(dir, { recursive: true });
    seededFile = path.join(dir, 'change-control.sqlite3');
    const svc = await startService({ db: seededFile });
    try {
      const world = await seedWorld(svc);
      reviewerToken = world.reviewer.token;
      requestId = world.changeRequest.id;
    } finally {
      await svc.close();
    }
  },
  async run({ vscode: suiteVSCode, tempDir, log }) {
    const noNode = pathWithoutNode(path.join(tempDir, 'no-node-path'));
    log(`PATH without node: ${noNode}`);
    const vscode = await VSCode.start({
      extensions: [{ vsix }],
      env: { PATH: noNode },
      userDataFiles: { [DATABASE]: seededFile },
      artifactsDir: path.join(suiteVSCode.artifactsDir, 'no-node'),
      log: (line) => log(`[profile without node] ${line}`),
    });
    const shot = (name: string) => vscode.screenshot(`vsix-without-node-${name}`);
    try {
      const description = vscode.view(VIEW).locator('.pane-header .description').first();
      await vscode.openActivity('Change Control');
      await vscode.step('the bundled service starts, signed in as its administrator', () =>
        expectText(description, 'admin · bundled service', 120_000),
      );
      await vscode.runCommand('Change Control: Show Logs');
      const output = vscode.page.locator('.part.panel .view-lines');
      await vscode.step("it runs on the editor's runtime (code-server's Node 24), on node:sqlite", async () => {
        const text = await expectText(
          output,
          /starting\s+the\s+bundled\s+service\s+on\s+the\s+editor's\s+runtime\s+"[^"]+"\s+\(Node\.js\s+24\./,
          30_000,
        );
        // The editor wraps long lines anywhere and shows spaces as no-break spaces: the path is
        // read with the breaks taken out and the spaces made plain.
        if (
          !text
            .replace(/\n/g, '')
            .replace(/\u00a0/g, ' ')
            .includes(`the editor's runtime "${NODE24_BIN}"`)
        )
          throw new Error(`the runtime is not code-server's Node 24 (${NODE24_BIN}): ${text}`);
        await expectText(output, /SQLite\s+driver:\s+node:sqlite\s+\(CHANGE_CONTROL_SQLITE_DRIVER=node\)/);
      });
      await shot('log');

      await vscode.runCommand('Change Control: Sign In');
      await vscode.quickPick(/Sign in with a token/);
      await vscode.inputBox(reviewerToken, { expectPrompt: 'API token' });
      await vscode.expectNotification('Signed in to the bundled Change Control service as bob.', 30_000);
      await expectText(description, 'bob · bundled service');
      await vscode.step('Needs my review lists the seeded request', async () => {
        const rows = await vscode.treeChildren(VIEW, 'Needs my review', (c) => c.some((r) => r.label === TITLE));
        assertEqual(
          rows.map((r) => r.label),
          [TITLE],
          'Needs my review',
        );
      });

      await vscode.clickTreeItem(TITLE, { view: VIEW });
      const web = await vscode.webview({ has: '#cr-title', timeout: 30_000 });
      await expectText(web.locator('#cr-title'), TITLE);
      await vscode.step('approve on the review page', async () => {
        await web.locator('#decision-approve').check();
        await web.locator('#ta-review').fill('Checked on a machine without Node.js; approved.');
        await expectText(web.locator('#send-review'), 'Submit: Approve');
        await web.locator('#send-review').click();
        await expectText(web.locator('#cr-status'), 'Approved');
        await expectText(web.locator('#approval .rule .rule-head'), 'Network team 1 of 1 approval');
      });
      await shot('approved');

      await vscode.step("the service's own database holds the approval", () => {
        const db = processSqliteDriver().driver.open(path.join(vscode.userDataDir, DATABASE), { readonly: true });
        try {
          const row = db.prepare('select status from cc_change_requests where id = ?').get([requestId]);
          assertEqual(row, { status: 'approved' }, 'the request in the database');
        } finally {
          db.close();
        }
        return Promise.resolve();
      });
    } finally {
      await vscode.stop();
    }
  },
};
