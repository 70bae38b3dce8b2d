// Authoring in the editor, in the packaged extension, against a service this file starts and seeds
// (test/extension/seed.ts: alice the author, bob the reviewer; the request "Move sw1 to rack R2").
// Alice goes from nothing to a submitted request without leaving the editor: Create Branch, the
// Branch Objects view, New Object (a template; saving creates it in the branch), an object edited
// and saved, a refused save in the Problems panel, a save over someone else's newer version
// (Compare, Overwrite, Discard), Open Change Request for Branch, Submit for Review. Then bob
// suggests a change in a thread, alice applies it from the thread, and another from the review
// page with Apply all. Each step is done through the UI and checked through the API.
import type { Locator } from 'playwright-core';
import { assertEqual, expectText, TIMEOUTS, type VSCode } from '../harness';
import { ok, SeededWorld } from '../fixtures/seeded-world';
import type { Scenario } from '../suite';
import { API } from '../../extension/seed';

const BRANCH = 'add-sw9';
const OBJECTS = 'Branch Objects';
const TITLE = 'Add sw9 and move sw1';
const REVIEW_TITLE = 'Move sw1 to rack R2';

const seeded = new SeededWorld();
const w = () => seeded.get();

/** A line of YAML as the editor renders it (spaces may be non-breaking). */
function yaml(line: string): RegExp {
  return new RegExp(line.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/ /g, '\\s'));
}

/** An editor tab by its whole name (a decorated tab shows the name and its suffix apart). */
function tabNamed(vscode: VSCode, name: string): Locator {
  return vscode.page.locator(`.tabs-container .tab[aria-label^="${name}"]`).first();
}

/** The text editor of the active tab. */
function activeEditor(vscode: VSCode): Locator {
  return vscode.page.locator('.editor-instance .monaco-editor .view-lines').filter({ visible: true }).first();
}

/** Replaces the whole text of the active editor with `text` and saves it (Ctrl+S). */
async function replaceText(vscode: VSCode, text: string, save = true): Promise<void> {
  await activeEditor(vscode).click();
  await vscode.page.keyboard.press('Control+A');
  await vscode.page.keyboard.press('Delete');
  await vscode.page.keyboard.insertText(text);
  if (save) await vscode.page.keyboard.press('Control+S');
}

/** Polls the API until `check` holds (it returns a description of what it saw otherwise). */
async function until(what: string, check: () => Promise<string | true>, timeout = 20_000): Promise<void> {
  const deadline = Date.now() + timeout;
  for (;;) {
    const seen = await check();
    if (seen === true) return;
    if (Date.now() > deadline) throw new Error(`${what}: ${seen}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** The branch's object named `name`, as the API shows it in the branch (admin's view). */
async function inBranch(schemaId: string, name: string): Promise<any> {
  const res = await w()
    .svc.admin.inBranch(schemaId)
    .get(`${API.devices}?name=${encodeURIComponent(name)}`);
  return res.body.results?.[0];
}

/** The comment widget (thread) shown in the active editor whose text matches. */
function thread(vscode: VSCode, has: string | RegExp): Locator {
  return vscode.page.locator('.review-widget', { hasText: has }).first();
}

/** Clicks a button of a comment form or thread (an action of the comment menus, by its title). */
async function clickAction(scope: Locator, title: string): Promise<void> {
  const name = new RegExp(`^${title.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}( \\(.*\\))?$`);
  const button = scope.getByRole('button', { name }).filter({ visible: true }).first();
  await button.waitFor({ state: 'visible', timeout: 15_000 });
  await button.click();
}

let schemaId = '';

export const scenarios: Scenario[] = [
  {
    name: 'authoring: Create Branch, Branch Objects, New Object and an edit saved into the branch, Problems, a newer version refused, Open Change Request, Submit for Review',
    prepare: (prep) => seeded.prepare(prep),
    async run({ vscode, screenshot }) {
      await vscode.openActivity('Change Control');
      await vscode.updateMachineSettings({ 'changeControl.serverUrl': w().svc.url });
      await seeded.signIn(vscode, w().author.token, 'alice');
      // Room for the Branch Objects view: the panes this scenario does not use are folded.
      for (const pane of ['Checks', 'My Reviews']) {
        const header = vscode.view(pane).locator('.pane-header').first();
        if ((await header.getAttribute('aria-expanded')) === 'true') await header.click();
      }

      await vscode.step('Create Branch offers its objects', async () => {
        await vscode.runCommand('Change Control: Create Branch');
        await vscode.inputBox(BRANCH, { expectPrompt: 'Name of the new branch' });
        await vscode.inputBox('', { expectPrompt: 'Description' });
        await vscode.clickNotificationButton(`Branch "${BRANCH}" created.`, 'Show Branch Objects');
        await expectText(vscode.view(OBJECTS).locator('.pane-header .description').first(), BRANCH);
        const branch = (await ok(w().svc.admin.get(`${API.branches}?name=${BRANCH}`), 'the branch')).results[0];
        schemaId = branch.schema_id;
      });

      await vscode.step("the Branch Objects view lists the branch's types and main's objects", async () => {
        await vscode.clickTreeItem('Device', { view: OBJECTS });
        await vscode.treeChildren(OBJECTS, 'Device', (c) => c.some((r) => r.label === 'sw1'));
      });

      await vscode.step('New Object… opens a template; saving creates the object in the branch', async () => {
        await vscode.runCommand('Change Control: New Object…');
        await vscode.quickPick('Device');
        await vscode.step('the template', async () => {
          await tabNamed(vscode, 'New Device.yaml').waitFor({ timeout: TIMEOUTS.ui });
          await expectText(activeEditor(vscode), yaml('device_type: null'));
        });
        await screenshot('authoring-new-object');
        await replaceText(
          vscode,
          'name: sw9\ndevice_type: c9300-48p\nrole: access\nsite: dc1\nstatus: planned\nrack: R9\n',
        );
        await vscode.expectNotification(`sw9 is created in branch ${BRANCH}.`, 30_000);
        await vscode.step('the tab of sw9', () => tabNamed(vscode, 'sw9.yaml').waitFor({ timeout: TIMEOUTS.ui }));
        const sw9 = await inBranch(schemaId, 'sw9');
        assertEqual({ rack: sw9?.rack, role: sw9?.role }, { rack: 'R9', role: 'access' }, 'sw9 through the API');
        const onMain = await w().svc.admin.get(`${API.devices}?name=sw9`);
        assertEqual(onMain.body.count, 0, 'sw9 is not on main');
      });

      await vscode.step('sw1 opens from the view; saving writes it into the branch, main keeps its own', async () => {
        await vscode.closeAllEditors();
        await vscode.clickTreeItem('sw1', { view: OBJECTS });
        await tabNamed(vscode, 'sw1.yaml').waitFor({ timeout: TIMEOUTS.ui });
        await expectText(activeEditor(vscode), yaml('rack: R3'), TIMEOUTS.ui);
        await replaceText(vscode, 'name: sw1\nrack: R7\nserial: FOC1234X\nstatus: active\n');
        await until('sw1 in the branch', async () =>
          (await inBranch(schemaId, 'sw1'))?.rack === 'R7' ? true : 'not yet',
        );
        const main = (await w().svc.admin.get(`${API.devices}?name=sw1`)).body.results[0];
        assertEqual(main.rack, 'R3', 'sw1 on main');
      });

      await vscode.step('the view marks what the branch changed: sw1 modified, sw9 added', async () => {
        await vscode.treeChildren(OBJECTS, 'Device', (c) => {
          const sw1 = c.find((r) => r.label === 'sw1');
          const sw9 = c.find((r) => r.label === 'sw9');
          return !!sw1 && /Updated/.test(sw1.description) && !!sw9 && /Created/.test(sw9.description);
        });
      });
      await screenshot('authoring-branch-objects');

      await vscode.step(
        'a save that is not a valid object shows in the Problems panel; the document stays dirty',
        async () => {
          await replaceText(vscode, 'name: sw1\nrack: [R8\nserial: FOC1234X\nstatus: active\n');
          await vscode.expectNotification(/Failed to save 'sw1\.yaml'/, TIMEOUTS.ui);
          await vscode.page.keyboard.press('Control+Shift+M');
          await vscode.page
            .locator('.markers-panel .monaco-list-row', { hasText: `/branches/${BRANCH}/dcim.device` })
            .first()
            .waitFor({ timeout: TIMEOUTS.ui });
          const tab = vscode.page.locator('.tabs-container .tab.active');
          if (!(await tab.evaluate((el) => el.classList.contains('dirty')))) throw new Error('the tab is not dirty');
          assertEqual((await inBranch(schemaId, 'sw1')).rack, 'R7', 'nothing was written');
        },
      );
      await screenshot('authoring-problems');

      await vscode.step(
        "a save over someone else's newer version is refused with Compare, Overwrite, Discard",
        async () => {
          await vscode.clearNotifications();
          // The document's own version, then someone else writes the object in the branch.
          await replaceText(vscode, 'name: sw1\nrack: R7\nserial: FOC1234X\nstatus: active\n');
          await until('saved', async () => ((await inBranch(schemaId, 'sw1'))?.rack === 'R7' ? true : 'no'));
          await vscode.page.waitForTimeout(500);
          const sw1 = await inBranch(schemaId, 'sw1');
          await ok(w().svc.admin.inBranch(schemaId).patch(`${API.devices}${sw1.id}/`, { rack: 'R6' }), 'someone else');
          await replaceText(vscode, 'name: sw1\nrack: R8\nserial: FOC1234X\nstatus: active\n');
          await vscode.expectDialog('sw1.yaml was changed in the branch since you opened it.');
        },
      );
      await screenshot('authoring-conflict');
      await vscode.step("Overwrite writes the editor's version", async () => {
        await vscode.dialogButton('Overwrite');
        await until('sw1 overwritten', async () => {
          const rack = (await inBranch(schemaId, 'sw1'))?.rack;
          return rack === 'R8' ? true : `rack ${rack}`;
        });
      });
      await vscode.clearNotifications();

      await vscode.step('Open Change Request for Branch and Submit for Review, from the palette', async () => {
        await vscode.closeAllEditors();
        await vscode.runCommand('Change Control: Open Change Request for Branch');
        await vscode.quickPick(new RegExp(BRANCH));
        await vscode.inputBox(TITLE, { expectPrompt: 'Title' });
        await vscode.inputBox('CHG-1099', { expectPrompt: 'External reference' });
        await vscode.expectNotification(`Change request "${TITLE}" opened as a draft.`, 30_000);
        await vscode.runCommand('Change Control: Submit for Review');
        await vscode.quickPick(TITLE);
        await vscode.expectNotification(`"${TITLE}" submitted for review`, 30_000);
        const cr = (await w().svc.admin.get(`${API.changeRequests}?ref=CHG-1099`)).body.results[0];
        assertEqual(
          { branch: cr?.branch_name, draft: cr?.status === 'draft' },
          { branch: BRANCH, draft: false },
          'submitted',
        );
      });
      await screenshot('authoring-submitted');
    },
  },
  {
    name: 'suggested changes: bob suggests a value in a thread, alice applies it there, and another with Apply all on the review page',
    async run({ vscode, screenshot }) {
      const world = w();
      await vscode.runCommand('Change Control: Sign Out');
      await vscode.clearNotifications();
      await seeded.signIn(vscode, world.reviewer.token, 'bob');

      const openSw1 = async () => {
        await vscode.closeAllEditors();
        await vscode.runCommand('Change Control: Open Change');
        await vscode.quickPick(REVIEW_TITLE);
        await vscode.quickPick('sw1');
        await vscode.tab(/^sw1 \(Modified/).waitFor({ timeout: TIMEOUTS.ui });
      };

      await vscode.step('Suggest a Change on the rack line: the value starts from the branch’s', async () => {
        await openSw1();
        const modified = vscode.page.locator('.editor-instance .monaco-diff-editor .editor.modified');
        await modified
          .locator('.view-line', { hasText: yaml('rack: R2') })
          .first()
          .click();
        await vscode.runCommand('Comments: Add Comment on Current Selection');
        const widget = vscode.page.locator('.review-widget').last();
        const editor = widget.locator('.comment-form .monaco-editor').first();
        await editor.waitFor({ state: 'visible' });
        await editor.click();
        await vscode.page.keyboard.type('R4 has the free ports.');
        await clickAction(widget, 'Suggest a Change');
        await until('the input box', async () => {
          const state = await vscode.quickInputState();
          return state.open && !state.palette ? true : JSON.stringify(state);
        });
        assertEqual((await vscode.quickInputState()).value, 'R2', 'the input starts from the current value');
        await vscode.inputBox('R4', { expectPrompt: 'The value you suggest for rack' });
        await expectText(thread(vscode, 'R4 has the free ports.'), /Suggested change/, TIMEOUTS.ui);
      });
      const posted = (await seeded.comments()).find((c) => c.suggestion);
      assertEqual(posted?.suggestion?.value, 'R4', 'the suggestion through the API');
      await screenshot('suggestion-thread');

      await vscode.runCommand('Change Control: Sign Out');
      await vscode.clearNotifications();
      await seeded.signIn(vscode, world.author.token, 'alice');
      await vscode.step(
        'alice applies it from the thread: the branch holds R4, the comment says who applied it',
        async () => {
          await openSw1();
          const t = thread(vscode, 'R4 has the free ports.');
          await t.waitFor({ timeout: TIMEOUTS.ui });
          await screenshot('suggestion-apply');
          await clickAction(t, 'Apply Suggestion');
          await vscode.expectNotification('The suggestion is applied in the branch', TIMEOUTS.ui);
          const sw1 = (await world.svc.admin.inBranch(world.branch.schemaId).get(`${API.devices}?name=sw1`)).body
            .results[0];
          assertEqual(sw1.rack, 'R4', 'sw1 in the branch');
          const c = (await seeded.comments()).find((x) => x.id === posted.id);
          assertEqual(
            { by: c.suggestion.applied_by?.username, resolved: c.resolved },
            { by: 'alice', resolved: true },
            'the comment',
          );
        },
      );

      await vscode.step('the review page shows a suggestion with Apply, and Apply all', async () => {
        await ok(
          world.reviewer.client.post(API.comments, {
            change_request: world.changeRequest.id,
            change_diff: world.changes.sw2,
            text: 'sw2 is live already.',
            suggestion: { attribute: 'status', value: 'active' },
          }),
          'a second suggestion',
        );
        await vscode.closeAllEditors();
        await vscode.runCommand('Change Control: Open Change Request');
        await vscode.quickPick(REVIEW_TITLE);
        const web = await vscode.webview({ has: '#apply-all-suggestions', timeout: 30_000 });
        await expectText(web.locator('#apply-all-suggestions'), 'Apply all suggestions (1)');
        if (await vscode.page.locator('.part.panel').isVisible()) await vscode.runCommand('View: Hide Panel');
        // sw1 folded to its title line: the list's head (Apply all) and sw2's suggestion show together.
        await web.locator(`#toggle-${world.changes.sw1}`).click();
        await web.locator('#apply-all-suggestions').scrollIntoViewIfNeeded();
        await screenshot('suggestion-review-page');
        await web.locator('#apply-all-suggestions').click();
        await until('sw2 in the branch', async () => {
          const sw2 = (await world.svc.admin.inBranch(world.branch.schemaId).get(`${API.devices}?name=sw2`)).body
            .results[0];
          return sw2?.status === 'active' ? true : `status ${sw2?.status}`;
        });
      });
    },
  },
  {
    name: "authoring, quick open and Search over a branch folder: Go to File lists an object's document and opens it to edit, Find in Files finds a value inside one",
    async run({ vscode, screenshot, log }) {
      // alice is signed in (the suggested changes scenario ends as her). An object no editor has
      // opened yet: quick open's history cannot list it, only the branch folder's file search.
      await ok(
        w().svc.admin.inBranch(schemaId).post(API.devices, { name: 'leaf42', status: 'planned', serial: 'JAE0042Q' }),
        'leaf42 in the branch',
      );
      await vscode.step('Open Branch as Workspace Folder', async () => {
        // A second folder makes the window a workspace: the browser loads the workbench again.
        // code-server now and then loses the new folder in that reload (the window comes back on
        // its folder, or as a workspace without it): as a user would, the step runs the command
        // again (in a workspace it only adds the folder), at most twice more.
        const row = vscode.page.locator('.explorer-folders-view .monaco-list-row', { hasText: `Branch ${BRANCH}` });
        for (let attempt = 1; ; attempt++) {
          const last = attempt >= 3;
          const wait = last ? TIMEOUTS.workbench : 45_000;
          await vscode.runCommand('Change Control: Open Branch as Workspace Folder');
          await vscode.quickPick(new RegExp(BRANCH));
          const shown = await (async () => {
            await vscode.page.waitForURL(/[?&]workspace=/, { timeout: wait });
            for (const part of ['.part.statusbar', '.part.activitybar'])
              await vscode.page.locator(part).waitFor({ state: 'visible', timeout: TIMEOUTS.workbench });
            // The reloaded window may restore another container, or the side bar hidden.
            await vscode.openActivity('Explorer');
            await row.first().waitFor({ timeout: wait });
          })()
            .then(() => true)
            .catch((e: Error) => {
              if (last) throw e;
              log(`the branch folder is not in the window (attempt ${attempt}: ${e.message.split('\n')[0]})`);
              return false;
            });
          if (shown) break;
          await vscode.page.locator('.part.statusbar').waitFor({ state: 'visible', timeout: TIMEOUTS.workbench });
        }
      });

      await vscode.step(
        'Go to File (Ctrl+P) lists leaf42 by part of its name; it opens the writable document',
        async () => {
          await vscode.closeAllEditors();
          await vscode.focusWorkbench();
          await vscode.page.keyboard.press('Control+P');
          const input = vscode.page.locator('.quick-input-widget .quick-input-box input');
          await input.waitFor({ timeout: TIMEOUTS.ui });
          await input.fill('leaf4');
          const row = vscode.page.locator('.quick-input-widget .quick-input-list .monaco-list-row', {
            hasText: 'leaf42.yaml',
          });
          await row.first().waitFor({ timeout: TIMEOUTS.ui });
          await screenshot('search-quick-open');
          await row.first().click();
          await tabNamed(vscode, 'leaf42.yaml').waitFor({ timeout: TIMEOUTS.ui });
          await expectText(activeEditor(vscode), yaml('serial: JAE0042Q'), TIMEOUTS.ui);
          // The branch's own document: a save writes the object into the branch.
          await replaceText(vscode, 'name: leaf42\nstatus: planned\nserial: JAE0042Q\nrack: R10\n');
          await until('leaf42 saved into the branch', async () => {
            const rack = (await inBranch(schemaId, 'leaf42'))?.rack;
            return rack === 'R10' ? true : `rack ${rack}`;
          });
        },
      );

      await vscode.step(
        "Find in Files finds a value inside sw9's document (not in its name) and opens it there",
        async () => {
          await vscode.closeAllEditors();
          await vscode.focusWorkbench();
          await vscode.page.keyboard.press('Control+Shift+F');
          const search = vscode.page.locator('.search-view .search-widget .input-box textarea').first();
          await search.waitFor({ timeout: TIMEOUTS.ui });
          await search.fill('c9300');
          await search.press('Enter');
          const match = vscode.page.locator('.search-view .results .monaco-list-row', { hasText: 'c9300-48p' });
          await match.first().waitFor({ timeout: TIMEOUTS.ui });
          await expectText(vscode.page.locator('.search-view .results').first(), /sw9\.yaml/);
          await screenshot('search-find-in-files');
          await match.first().click();
          await tabNamed(vscode, 'sw9.yaml').waitFor({ timeout: TIMEOUTS.ui });
          await expectText(activeEditor(vscode), yaml('device_type: c9300-48p'), TIMEOUTS.ui);
        },
      );
    },
  },
];
