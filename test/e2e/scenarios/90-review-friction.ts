// Reviewing without friction, on the seeded world with an interface and a prefix added to the
// branch and a later change on main (sw1's site): objects named as people name them in the tree,
// tabs and breadcrumbs; Mark as Viewed and Next Change in the diff editor's title; the conflicting
// attribute marked on its line; Compare with Main Now showing only what the merge does; an edited
// comment marked; after Start Review the new thread's primary button adds to the pending review,
// whose count shows in the status bar; Request Changes written in an editor tab; the activity
// badge counting only the reviews waiting. As alice: her own page leads with her next step, and a
// command no request allows says why. On an empty service: the first run offers Create Branch.
import { expectText, type VSCode } from '../harness';
import { settled } from '../fixtures/layout';
import { ok, SeededWorld } from '../fixtures/seeded-world';
import type { Scenario } from '../suite';
import { API } from '../../extension/seed';
import { startService, ADMIN_TOKEN, type TestService } from '../../support/service';

const VIEW = 'Change Requests';
const CHANGES = 'Changed Objects';
const TITLE = 'Move sw1 to rack R2';

const seeded = new SeededWorld();
const w = () => seeded.get();
let empty: TestService | undefined;

/** A line of YAML as the editor renders it (spaces may be non-breaking). */
const yaml = (line: string) => new RegExp(line.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/ /g, '\\s'));

function diffEditor(vscode: VSCode) {
  const editor = vscode.page.locator('.editor-instance .monaco-diff-editor').first();
  return {
    editor,
    original: editor.locator('.editor.original .view-lines'),
    modified: editor.locator('.editor.modified .view-lines'),
  };
}

/** An action of the active editor's title bar, by its title. */
const titleAction = (vscode: VSCode, title: string) =>
  vscode.page
    .locator(`.editor-group-container .editor-actions .action-label[aria-label^="${title}"]`)
    .filter({ visible: true })
    .first();

async function openChange(vscode: VSCode, label: string, tab: RegExp): Promise<void> {
  await vscode.openActivity('Change Review');
  await vscode.clickTreeItem(label, { view: CHANGES });
  await vscode.tab(tab).waitFor({ timeout: 20_000 });
}

export const scenarios: Scenario[] = [
  {
    name: 'friction: objects named as people name them, in the tree, the tab and the breadcrumbs; the activity badge counts only the reviews waiting',
    prepare: async (prep) => {
      await seeded.prepare(prep);
      const world = w();
      const admin = world.svc.admin;
      const inBranch = admin.inBranch(world.branch.schemaId);
      const sw1 = (await ok(admin.get(`${API.devices}?name=sw1`), 'sw1')).results[0];
      await ok(inBranch.post('/api/dcim/interfaces/', { name: 'eth0', device: sw1.id, mtu: 9000 }), 'eth0 of sw1');
      await ok(inBranch.post('/api/ipam/prefixes/', { prefix: '10.0.0.0/24', status: 'active' }), 'the prefix');
      // Main's own later change to sw1, which the branch does not touch.
      await ok(admin.patch(`${API.devices}${sw1.id}/`, { site: 'dc1-north' }), 'main moves sw1 to dc1-north');
      await ok(
        admin.post(API.permissions, {
          name: 'reviewers see interfaces and prefixes',
          object_types: ['dcim.interface', 'ipam.prefix'],
          actions: ['view'],
          users: [world.reviewer.id],
        }),
        'view interfaces and prefixes',
      );
      // alice comments on sw2 and corrects herself.
      const comment = await ok(
        world.author.client.post(API.comments, {
          change_request: world.changeRequest.id,
          change_diff: world.changes.sw2,
          text: 'sw2 goes in R2, U12.',
        }),
        "alice's comment",
      );
      await ok(world.author.client.patch(`${API.comments}${comment.id}/`, { text: 'sw2 goes in R2, U14.' }), 'edited');
      empty = await startService();
      prep.onCleanup(async () => {
        await empty?.close();
        empty = undefined;
      });
    },
    async run({ vscode, screenshot }) {
      await vscode.openActivity('Change Control');
      await vscode.updateMachineSettings({ 'changeControl.serverUrl': w().svc.url });
      await seeded.signIn(vscode, w().reviewer.token, 'bob');
      await vscode.treeChildren(VIEW, 'Needs my review', (c) => c.some((r) => r.label === TITLE));
      await vscode.clickTreeItem(TITLE, { view: VIEW });
      await vscode.focusWorkbench();
      await vscode.openActivity('Change Review');
      await vscode.step('the tree names the interface with its device and the prefix by its prefix', async () => {
        await vscode.treeChildren(CHANGES, 'dcim.interface', (c) => c.some((r) => r.label === 'sw1 · eth0'));
        await vscode.treeChildren(CHANGES, 'ipam.prefix', (c) => c.some((r) => r.label === '10.0.0.0/24'));
      });
      await openChange(vscode, 'sw1 · eth0', /^sw1 · eth0 \(Created\)/);
      await vscode.step('the breadcrumbs read as the request, the type and the name', async () => {
        await expectText(
          vscode.page.locator('.editor-group-container.active .breadcrumbs-control').first(),
          /Change request #\d+\s*dcim\.interface\s*sw1 · eth0\.yaml/,
          20_000,
        );
      });
      await vscode.clearNotifications();
      await settled(vscode);
      await screenshot('names-and-paths');
      await vscode.step('the activity badge counts the one review waiting, not the unviewed changes', async () => {
        const badge = vscode.page
          .locator('.part.activitybar .action-item', { has: vscode.page.locator('[aria-label^="Change Control"]') })
          .locator('.badge-content');
        await expectText(badge, /^1$/);
        const review = vscode.page
          .locator('.part.activitybar .action-item', { has: vscode.page.locator('[aria-label^="Change Review"]') })
          .locator('.badge-content');
        if ((await review.count()) > 0 && (await review.first().isVisible()))
          throw new Error(`Change Review has a badge: ${await review.first().innerText()}`);
      });
    },
  },
  {
    name: 'friction: the diff editor marks the conflict on its line and offers Mark as Viewed and Next Change in its title; Compare with Main Now shows only what the merge does',
    async run({ vscode, screenshot, log }) {
      await vscode.closeAllEditors();
      await openChange(vscode, 'sw1', /^sw1 \(Modified, conflicts with main\)/);
      const diff = diffEditor(vscode);
      await expectText(diff.modified, yaml('rack: R2'), 20_000);
      await vscode.step('the rack line carries a warning', async () => {
        await diff.editor.locator('.editor.modified .squiggly-warning').first().waitFor({ timeout: 20_000 });
      });
      await vscode.step(
        'Mark as Viewed in the title marks it in the tree; the title then offers Mark as Not Viewed',
        async () => {
          await titleAction(vscode, 'Mark as Viewed').click();
          await titleAction(vscode, 'Mark as Not Viewed').waitFor({ timeout: 10_000 });
          const checkbox = vscode
            .treeItem('sw1', { view: CHANGES })
            .locator('.custom-view-tree-node-item-checkbox, .monaco-checkbox')
            .first();
          const checked = async () =>
            (await checkbox.getAttribute('aria-checked')) === 'true' ||
            /\bchecked\b/.test((await checkbox.getAttribute('class')) ?? '');
          const deadline = Date.now() + 10_000;
          while (!(await checked())) {
            if (Date.now() > deadline) {
              log(`rows: ${JSON.stringify(await vscode.treeRows(CHANGES))}`);
              throw new Error(`sw1's checkbox: ${await checkbox.getAttribute('class')}`);
            }
            await new Promise((r) => setTimeout(r, 200));
          }
        },
      );
      await screenshot('diff-editor-title');
      await vscode.step('Next Change in the title opens the next change not viewed', async () => {
        await titleAction(vscode, 'Next Change').click();
        await vscode.tab(/^sw2 \(Created\)/).waitFor({ timeout: 20_000 });
      });
      await vscode.step(
        "Compare with Main Now: main now against main after the merge (main's own site change on both sides)",
        async () => {
          await vscode.closeAllEditors();
          await vscode.openActivity('Change Review');
          const row = vscode.treeItem('sw1', { view: CHANGES });
          await row.hover();
          await row.locator('.action-label[aria-label^="Compare with Main Now"]').click();
          await vscode.tab(/^sw1 \(main now ↔ after the merge\)/).waitFor({ timeout: 20_000 });
          const d = diffEditor(vscode);
          await expectText(d.original, yaml('rack: R3'), 20_000);
          await expectText(d.modified, yaml('rack: R2'));
          await expectText(d.original, yaml('site: dc1-north'));
          await expectText(d.modified, yaml('site: dc1-north'));
        },
      );
      await screenshot('compare-with-main');
    },
  },
  {
    name: "friction: an edited comment says (edited); after Start Review a new thread's primary button adds to the pending review, counted in the status bar; Request Changes is written in an editor tab",
    timeoutMs: 240_000,
    async run({ vscode, screenshot }) {
      await vscode.closeAllEditors();
      await openChange(vscode, 'sw2', /^sw2 \(Created\)/);
      await vscode.step("alice's edited comment says (edited)", async () => {
        await expectText(vscode.page.locator('.review-widget', { hasText: 'U14' }).first(), /\(edited\)/, 20_000);
      });
      await vscode.runCommand('Change Control: Start Review');
      await vscode.quickPick(TITLE);
      await vscode.clearNotifications();
      await vscode.closeAllEditors();
      await openChange(vscode, 'sw1', /^sw1 \(Modified/);
      const diff = diffEditor(vscode);
      await expectText(diff.modified, yaml('serial: FOC1234X'), 20_000);
      await vscode.step("a new thread's primary button is Add Review Comment", async () => {
        await diff.editor
          .locator('.editor.modified .view-line', { hasText: yaml('serial: FOC1234X') })
          .first()
          .click();
        await vscode.runCommand('Comments: Add Comment on Current Selection');
        const widget = vscode.page.locator('.review-widget').last();
        const input = widget.locator('.comment-form .monaco-editor').first();
        await input.waitFor({ state: 'visible' });
        await input.click();
        await vscode.page.keyboard.type('Is the serial right?');
        // The form's first labelled button is its primary one (Ctrl+Enter runs it).
        const labels = (await widget.locator('.monaco-button').filter({ visible: true }).allInnerTexts())
          .map((t) => t.trim())
          .filter((t) => t);
        if (!/^Add Review Comment/.test(labels[0] ?? '')) throw new Error(`the form's buttons: ${labels.join(', ')}`);
        await widget
          .getByRole('button', { name: /^Add Review Comment/ })
          .first()
          .click();
        await expectText(
          vscode.page.locator('.review-widget', { hasText: 'Is the serial right?' }).first(),
          'Pending',
          20_000,
        );
      });
      await vscode.step('the pending count shows in the status bar', async () => {
        await expectText(vscode.page.locator('.part.statusbar'), /1 pending/, 10_000);
      });
      await screenshot('pending-review-count');

      await vscode.runCommand('Change Control: Submit Review');
      await vscode.quickPick(/Request changes/);
      const text = ['Rack R2 has no free power feed.', '', '- move sw1 to R3 instead', '- or add a feed first'];
      await vscode.step('Request Changes opens an editor tab; several lines are written and saved', async () => {
        await vscode.tab(/^Request changes on Move sw1 to rack R2/).waitFor({ timeout: 20_000 });
        for (const [i, line] of text.entries()) {
          if (i > 0) await vscode.page.keyboard.press('Enter');
          await vscode.page.keyboard.type(line);
        }
        await screenshot('request-changes-editor');
        await vscode.page.keyboard.press('Control+S');
      });
      await vscode.expectNotification(
        `Your review (Request changes) is submitted on "${TITLE}" with 1 comment`,
        30_000,
      );
      const reviews = await ok(
        w().svc.admin.get(`${API.reviews}?change_request_id=${w().changeRequest.id}`),
        'reviews',
      );
      const mine = reviews.results.find((r: any) => r.reviewer.username === 'bob');
      if (mine?.decision !== 'reject' || mine.comment !== text.join('\n'))
        throw new Error(`bob's review: ${JSON.stringify(mine)}`);
    },
  },
  {
    name: "friction: the author's page leads with her next step; a command no request allows for her says why",
    async run({ vscode, screenshot }) {
      await vscode.closeAllEditors();
      await vscode.openActivity('Change Control');
      await vscode.runCommand('Change Control: Sign Out');
      await vscode.clearNotifications();
      await seeded.signIn(vscode, w().author.token, 'alice');
      await vscode.treeChildren(VIEW, 'Mine', (c) => c.some((r) => r.label === TITLE));
      await vscode.clickTreeItem(TITLE, { view: VIEW });
      const web = await vscode.webview({ has: '#cr-title', timeout: 30_000 });
      await vscode.step('her page says what she does next; no review form', async () => {
        await expectText(web.locator('#decision h2'), 'Your change request');
        await expectText(web.locator('#author-next'), /^(Changes were requested|Waiting for reviews)/);
        if ((await web.locator('#review-form').count()) !== 0) throw new Error("a review form on the author's page");
      });
      await vscode.clearNotifications();
      await settled(vscode);
      await screenshot('author-page');
      await vscode.focusWorkbench();
      await vscode.closeAllEditors();
      await vscode.runCommand('Change Control: Review');
      await vscode.step('Review: no request allows it for her; each says why', async () => {
        const widget = vscode.page.locator('.quick-input-widget');
        await expectText(widget, /No change request allows Review for you now/, 20_000);
        await expectText(widget, /own change request/i);
      });
      await vscode.clearNotifications();
      await settled(vscode);
      await screenshot('why-not-allowed');
      await vscode.page.keyboard.press('Escape');
    },
  },
  {
    name: 'friction: on a service with no branch yet, the first-run welcome offers Create Branch',
    async run({ vscode, screenshot }) {
      await vscode.openActivity('Change Control');
      await vscode.updateMachineSettings({ 'changeControl.serverUrl': empty!.url });
      await vscode.runCommand('Change Control: Sign In');
      await vscode.quickPick(/Sign in with a token/);
      await vscode.inputBox(ADMIN_TOKEN, { expectPrompt: 'API token' });
      await vscode.expectNotification('as admin.', 30_000);
      await vscode.clearNotifications();
      const welcome = vscode.view(VIEW).locator('.welcome-view-content');
      await expectText(welcome, 'There are no change requests and no branches yet', 30_000);
      await screenshot('first-run-create-branch');
      await welcome.locator('.monaco-button', { hasText: 'Create Branch' }).first().click();
      await expectText(vscode.page.locator('.quick-input-widget'), /Name of the new branch/, 20_000);
      await vscode.page.keyboard.press('Escape');
      await vscode.updateMachineSettings({ 'changeControl.serverUrl': w().svc.url });
    },
  },
];
