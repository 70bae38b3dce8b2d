// Reviewing inside the editor, in the packaged extension, against a service this file starts and
// seeds (test/extension/seed.ts: bob reviews alice's "Move sw1 to rack R2", which moves sw1 from
// rack R1 to R2 and adds sw2; the policy requires the reported check ci/build).
//
// Each step is done through the UI (the Changed Objects tree, the diff editor, the comment widget,
// the palette), then checked through the API. The scenarios build on each other.
import type { Locator } from 'playwright-core';
import { assertEqual, expectText, TIMEOUTS, type VSCode } from '../harness';
import { SeededWorld } from '../fixtures/seeded-world';
import type { Scenario } from '../suite';
import { API, CHECK_NAME, reportCheck } from '../../extension/seed';

const VIEW = 'Change Requests';
const CHANGES = 'Changed Objects';
const TITLE = 'Move sw1 to rack R2';

const seeded = new SeededWorld();
const w = () => seeded.get();

async function apiReviews(): Promise<any[]> {
  const res = await w().svc.admin.get(`${API.reviews}?change_request_id=${w().changeRequest.id}`);
  return res.body.results;
}

/** A line of YAML as the editor renders it (spaces may be non-breaking). */
function yaml(line: string): RegExp {
  return new RegExp(line.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/ /g, '\\s'));
}

/** The diff editor of the active tab: its two sides. */
function diffEditor(vscode: VSCode) {
  const editor = vscode.page.locator('.editor-instance .monaco-diff-editor').first();
  return {
    editor,
    original: editor.locator('.editor.original .view-lines'),
    modified: editor.locator('.editor.modified .view-lines'),
    /** A line of the modified side, by its text. */
    modifiedLine: (text: string) => editor.locator('.editor.modified .view-line', { hasText: yaml(text) }).first(),
  };
}

/** The comment widget (thread) shown in the active editor whose text matches. */
function thread(vscode: VSCode, has: string | RegExp): Locator {
  return vscode.page.locator('.review-widget', { hasText: has }).first();
}

/** Opens the comment widget on a line of the modified side and types a comment into it. */
async function writeComment(vscode: VSCode, line: string, text: string): Promise<Locator> {
  const diff = diffEditor(vscode);
  await diff.modifiedLine(line).click();
  await vscode.runCommand('Comments: Add Comment on Current Selection');
  const widget = vscode.page.locator('.review-widget').last();
  const editor = widget.locator('.comment-form .monaco-editor').first();
  await editor.waitFor({ state: 'visible' });
  await editor.click();
  await vscode.page.keyboard.type(text);
  return widget;
}

/** Clicks a button of a comment form or thread (an action of the comment menus, by its title). */
async function clickAction(scope: Locator, title: string): Promise<void> {
  // Buttons are named by their command's title, with the keybinding after it when there is one.
  const name = new RegExp(`^${title.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}( \\(.*\\))?$`);
  const button = scope.getByRole('button', { name }).filter({ visible: true }).first();
  try {
    await button.waitFor({ state: 'visible', timeout: 10_000 });
  } catch {
    const shown = await scope
      .locator('.monaco-button, .action-label')
      .evaluateAll((els) =>
        els.map(
          (e) =>
            `${e.getAttribute('aria-label') ?? e.textContent?.trim()}${(e as HTMLElement).offsetParent ? '' : ' (hidden)'}`,
        ),
      )
      .catch(() => []);
    throw new Error(`no visible button "${title}" (buttons: ${shown.join(', ') || 'none'})`);
  }
  await button.click();
}

export const scenarios: Scenario[] = [
  {
    name: 'review in the editor: the Changed Objects tree opens a change in the diff editor, both sides shown, viewed marks and Next Change',
    prepare: (prep) => seeded.prepare(prep),
    async run({ vscode, screenshot }) {
      await showChangeControl(vscode);
      await vscode.step('Use a Remote Server sets the service and signs in', async () => {
        await vscode.runCommand('Change Control: Use a Remote Server');
        await vscode.inputBox(w().svc.url, { expectPrompt: 'URL of the Change Control service' });
        await vscode.quickPick(/Sign in with a token/);
        await vscode.inputBox(w().reviewer.token, { expectPrompt: 'API token' });
        await vscode.expectNotification('as bob.', 30_000);
        await vscode.clearNotifications();
      });

      await vscode.step('selecting the request shows its changes, grouped by object type', async () => {
        await vscode.treeChildren(VIEW, 'Needs my review', (c) => c.some((r) => r.label === TITLE));
        await vscode.clickTreeItem(TITLE, { view: VIEW });
        // Changed Objects has a container of its own (the whole side bar's height).
        await showChangeReview(vscode);
        const rows = await vscode.treeChildren(CHANGES, 'dcim.device', (c) => c.length === 2);
        assertEqual(
          rows.map((r) => r.label),
          ['sw1', 'sw2'],
          'changed objects',
        );
        if (!/Updated · conflicts/.test(rows[0].description)) throw new Error(`sw1 row: ${rows[0].description}`);
        if (!/Created/.test(rows[1].description)) throw new Error(`sw2 row: ${rows[1].description}`);
      });

      await vscode.step('sw1 opens in the diff editor: rack R1 at the baseline, R2 in the branch', async () => {
        await vscode.closeAllEditors();
        await vscode.clickTreeItem('sw1', { view: CHANGES });
        await vscode.tab(/^sw1 \(Modified, conflicts with main\)/).waitFor({ timeout: 20_000 });
        const diff = diffEditor(vscode);
        await expectText(diff.original, yaml('rack: R1'), 20_000);
        await expectText(diff.modified, yaml('rack: R2'));
        await expectText(diff.original, yaml('status: active'));
        await expectText(diff.modified, yaml('status: planned'));
        // The changed lines are marked as the diff editor marks them.
        await diff.editor.locator('.editor.modified .line-insert, .editor.modified .char-insert').first().waitFor();
      });
      await screenshot('diff-editor');

      await vscode.step(
        'sw2, a create: the branch side alone (no empty baseline shown as a deleted line)',
        async () => {
          await vscode.clickTreeItem('sw2', { view: CHANGES });
          await vscode.tab(/^sw2 \(Created\)/).waitFor({ timeout: 20_000 });
          const editor = vscode.page.locator('.editor-instance').filter({ visible: true }).first();
          await expectText(editor.locator('.view-lines').first(), yaml('name: sw2'), 20_000);
          assertEqual(await editor.locator('.monaco-diff-editor').count(), 0, 'a diff editor for a create');
          assertEqual(await editor.locator('.line-delete, .char-delete').count(), 0, 'deleted lines of a create');
          await screenshot('created-object');
        },
      );

      await vscode.step('marking sw1 viewed; Next Change skips it', async () => {
        const sw1 = vscode.treeItem('sw1', { view: CHANGES });
        await sw1
          .locator('.custom-view-tree-node-item-checkbox, input[type="checkbox"], .monaco-checkbox')
          .first()
          .click();
        await expectText(vscode.view(CHANGES).locator('.pane-header'), /Changed Objects/);
        await vscode.closeAllEditors();
        await vscode.runCommand('Change Control: Next Change');
        await vscode.tab(/^sw2 \(Created\)/).waitFor({ timeout: 20_000 });
      });

      await vscode.step('Open All Changes: every changed object in one multi-diff editor', async () => {
        await vscode.closeAllEditors();
        await vscode.runCommand('Change Control: Open All Changes');
        await vscode.page
          .locator(`.tabs-container .tab[aria-label^='Changes of "${TITLE}"']`)
          .waitFor({ timeout: 20_000 });
        const editor = vscode.page.locator('.editor-instance').filter({ visible: true }).first();
        await expectText(editor, /sw1\.yaml[\s\S]*sw2\.yaml/, 20_000);
      });
      await screenshot('all-changes');
    },
  },
  {
    name: 'review in the editor: a comment on the rack line is stored with attribute "rack"; a reply, edited; the thread resolved',
    async run({ vscode, screenshot }) {
      await openSw1(vscode, 'rack: R2');

      const text = 'Why R2 and not R3? Main moved it to **R3**.';
      await vscode.step('comment on the rack line', async () => {
        const form = await writeComment(vscode, 'rack: R2', text);
        await clickAction(form, 'Add Comment');
        await expectText(thread(vscode, 'Why R2 and not R3?'), 'Main moved it to R3.', 20_000);
      });
      const [root] = await seeded.comments();
      assertEqual(
        { change_diff: root?.change_diff, parent: root?.parent, author: root?.author.username, text: root?.text },
        { change_diff: w().changes.sw1, parent: null, author: 'bob', text },
        'the comment through the API',
      );

      const reply = 'R2 has the free ports; R3 is full.';
      await vscode.step('reply in the thread', async () => {
        const t = thread(vscode, 'Why R2 and not R3?');
        await t.locator('.review-thread-reply-button, .comment-form .monaco-editor').first().click();
        await vscode.page.keyboard.type(reply);
        await clickAction(t, 'Add Comment');
        await expectText(t, reply, 20_000);
      });
      await screenshot('diff-editor-thread');
      const edited = 'R2 has the free ports and power; R3 is full.';
      await vscode.step('edit my reply', async () => {
        const t = thread(vscode, 'Why R2 and not R3?');
        const mine = t.locator('.review-comment', { hasText: reply }).first();
        await mine.hover();
        await clickAction(mine, 'Edit Comment');
        const editor = mine.locator('.monaco-editor').first();
        await editor.waitFor({ state: 'visible' });
        await editor.click();
        await vscode.page.keyboard.press('Control+A');
        await vscode.page.keyboard.type(edited);
        await clickAction(mine, 'Save');
        await expectText(t, edited, 20_000);
      });
      await vscode.step('resolve the thread', async () => {
        const t = thread(vscode, 'Why R2 and not R3?');
        await t
          .locator('.head')
          .hover()
          .catch(() => undefined);
        await clickAction(t, 'Resolve Thread');
        // VS Code folds a thread away once it is resolved (comments.collapseOnResolve).
        await t.locator('.review-comment').first().waitFor({ state: 'hidden', timeout: 20_000 });
      });
      const comments = await seeded.comments();
      assertEqual(comments.length, 2, 'comments through the API');
      const answer = comments.find((c) => c.id !== root.id);
      assertEqual(
        { parent: answer.parent, change_diff: answer.change_diff, text: answer.text },
        { parent: root.id, change_diff: w().changes.sw1, text: edited },
        'the edited reply through the API',
      );
      assertEqual(comments.find((c) => c.id === root.id).text, text, "resolving left the first comment's text alone");
      assertEqual(comments.find((c) => c.id === root.id).resolved, true, 'the thread resolved through the API');
      await screenshot('thread-resolved');
      // The thread is anchored to the line it was started on: the service stores its attribute.
      assertEqual(root.attribute, 'rack', 'the attribute of the thread through the API');
    },
  },
  {
    name: 'review in the editor: a pending review (kept across a reload) submitted with an approval',
    timeoutMs: 240_000,
    async run({ vscode, screenshot }) {
      await openSw1(vscode, 'status: planned');

      const draft = 'Planned until the move is done: fine.';
      await vscode.step('Start Review keeps the comment pending', async () => {
        const form = await writeComment(vscode, 'status: planned', draft);
        await clickAction(form, 'Start Review');
        await expectText(thread(vscode, draft), 'Pending', 20_000);
      });
      assertEqual(
        (await seeded.comments()).some((c) => c.text === draft),
        false,
        'a pending comment is not posted',
      );
      await screenshot('pending-review');

      await vscode.reloadWindow();
      await vscode.step('the draft survives the reload (Changed Objects remembers its request)', async () => {
        await showChangeReview(vscode);
        await vscode.clickTreeItem('sw1', { view: CHANGES });
        await expectText(thread(vscode, draft), 'Pending', 60_000);
      });

      await vscode.runCommand('Change Control: Submit Review');
      await vscode.step('the decision is asked for, nothing preselected: Enter alone picks nothing', async () => {
        const rows = vscode.page.locator(VSCodeSel.quickInputRow);
        await vscode.expectQuickPick('Approve');
        await rows.nth(2).waitFor();
        await vscode.page.locator(`${VSCodeSel.quickInputRow}.focused`).waitFor({ state: 'detached', timeout: 5_000 });
        await vscode.page.keyboard.press('Enter');
        await rows.nth(2).waitFor({ timeout: 2_000 });
        assertEqual(
          await vscode.quickPickLabels(),
          ['Approve', 'Request changes', 'Comment'],
          'the decisions, still offered',
        );
        await screenshot('submit-review-decision');
      });
      await vscode.quickPick(/Approve/);
      await vscode.inputBox('Rack R2 has room and power.', { expectPrompt: 'Comment' });
      await vscode.expectNotification(`Your review (Approve) is submitted on "${TITLE}" with 1 comment`, 30_000);
      const reviews = await apiReviews();
      assertEqual(
        reviews.map((r) => [r.reviewer.username, r.decision, r.comment]),
        [['bob', 'approve', 'Rack R2 has room and power.']],
        'the review through the API',
      );
      const posted = (await seeded.comments()).find((c) => c.text === draft);
      assertEqual(
        { attribute: posted?.attribute, change_diff: posted?.change_diff },
        { attribute: 'status', change_diff: w().changes.sw1 },
        'the pending comment, posted',
      );
    },
  },
  {
    name: "live: a pipeline's check report appears in the Checks view with no user action",
    async run({ vscode, screenshot }) {
      // The request is the selected one since the scenarios before (its changes are reviewed).
      await showChangeControl(vscode);
      await vscode.expandView('Checks');
      await expectText(vscode.treeItem(CHECK_NAME, { view: 'Checks' }), /Pending/, TIMEOUTS.ui);
      await reportCheck(w(), 'success', 'build #1042 passed');
      await vscode.step('the Checks view shows the result within seconds', async () => {
        const row = vscode.treeItem(CHECK_NAME, { view: 'Checks' });
        await expectText(row, /Passed/, 5_000);
      });
      await screenshot('checks-live');
    },
  },
  {
    name: 'authors: Create Branch, open its change request, edit the description in an editor tab (saved back), Submit for Review',
    async run({ vscode, screenshot }) {
      await showChangeControl(vscode);
      await vscode.runCommand('Change Control: Sign Out');
      await vscode.clearNotifications();
      await vscode.runCommand('Change Control: Sign In');
      await vscode.quickPick(/Sign in with a token/);
      await vscode.inputBox(w().author.token, { expectPrompt: 'API token' });
      await vscode.expectNotification('as alice.', 30_000);
      await vscode.clearNotifications();

      await vscode.runCommand('Change Control: Create Branch');
      await vscode.inputBox('add-sw5', { expectPrompt: 'Name of the new branch' });
      await vscode.inputBox('', { expectPrompt: 'Description' });
      await vscode.clickNotificationButton('Branch "add-sw5" created.', 'Open Change Request');
      await vscode.inputBox('Add sw5 to rack R5', { expectPrompt: 'Title' });
      await vscode.inputBox('CHG-1050', { expectPrompt: 'External reference' });
      await vscode.expectNotification('Change request "Add sw5 to rack R5" opened as a draft.', 30_000);
      const created = (await w().svc.admin.get(`${API.changeRequests}?ref=CHG-1050`)).body.results[0];
      assertEqual(
        { status: created?.status, branch_name: created?.branch_name },
        { status: 'draft', branch_name: 'add-sw5' },
        'the new request through the API',
      );

      const description = 'Rack R5 gets sw5 for the new edge.';
      await vscode.step('Edit Description opens it as Markdown; saving sends it to the service', async () => {
        await focusSidebar(vscode);
        await vscode.clearNotifications();
        await vscode.runCommand('Change Control: Edit Description');
        await vscode.quickPick('Add sw5 to rack R5');
        await vscode.page
          .locator('.tabs-container .tab.active[aria-label="Add sw5 to rack R5.md"]')
          .waitFor({ timeout: 20_000 });
        await vscode.page
          .locator('.editor-instance .monaco-editor .view-lines')
          .filter({ visible: true })
          .first()
          .click();
        await vscode.page.keyboard.type(description);
        await vscode.page.keyboard.press('Control+S');
        const deadline = Date.now() + 20_000;
        for (;;) {
          const now = (await w().svc.admin.get(`${API.changeRequests}${created.id}/`)).body.description;
          if (now === description) break;
          if (Date.now() > deadline) throw new Error(`the description through the API: ${JSON.stringify(now)}`);
          await new Promise((r) => setTimeout(r, 200));
        }
      });
      await screenshot('edit-description');

      await focusSidebar(vscode);
      await vscode.runCommand('Change Control: Submit for Review');
      await vscode.quickPick('Add sw5 to rack R5');
      await vscode.expectNotification('"Add sw5 to rack R5" submitted for review', 30_000);
      assertEqual(
        (await w().svc.admin.get(`${API.changeRequests}${created.id}/`)).body.status === 'draft',
        false,
        'submitted through the API',
      );
    },
  },
];

/** Shows the Change Control container (by its palette command: after a reload the side bar may come back hidden). */
async function showChangeControl(vscode: VSCode): Promise<void> {
  await vscode.runCommand('View: Show Change Control');
  await vscode.page.locator('.part.sidebar').waitFor({ state: 'visible' });
}

/** Shows the Change Review container: the Changed Objects of the request under review. */
async function showChangeReview(vscode: VSCode): Promise<void> {
  await vscode.openActivity('Change Review');
}

/** Opens sw1's change in the diff editor from the Changed Objects tree, alone, once its branch side shows `line`. */
async function openSw1(vscode: VSCode, line: string): Promise<void> {
  await vscode.closeAllEditors();
  await showChangeReview(vscode);
  await vscode.clickTreeItem('sw1', { view: CHANGES });
  await vscode.tab(/^sw1 \(Modified/).waitFor({ timeout: 20_000 });
  await expectText(diffEditor(vscode).modified, yaml(line), 20_000);
}

/** Puts keyboard focus back in the workbench (out of a webview that took it) by clicking the side bar's title. */
async function focusSidebar(vscode: VSCode): Promise<void> {
  await vscode.page.locator('.part.sidebar .composite.title').first().click();
}

const VSCodeSel = { quickInputRow: '.quick-input-widget .quick-input-list .monaco-list-row' };
