// Conflicts lead somewhere: the built-in check `mergeable` ("Merges cleanly") names each object
// that would conflict; in the Checks view it opens to a row per object (its problem beside it),
// and a click on the object opens its diff against main as it is now (main's R3, the branch's
// R2). The seeded policy names `mergeable` too; seen as bob, on the seeded world
// (test/extension/seed.ts), whose branch conflicts with main on sw1's rack.
import { expectText, TIMEOUTS, type VSCode } from '../harness';
import { ok, SeededWorld } from '../fixtures/seeded-world';
import type { Scenario } from '../suite';
import { API, CHECK_NAME } from '../../extension/seed';

const VIEW = 'Change Requests';
const CHECKS = 'Checks';
const TITLE = 'Move sw1 to rack R2';
const MERGEABLE = 'Merges cleanly';

const seeded = new SeededWorld();
const w = () => seeded.get();

/** A line of YAML as the editor draws it (spaces as no-break spaces). */
const yaml = (line: string) => new RegExp(line.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/ /g, '\\s'));

function diffEditor(vscode: VSCode) {
  const editor = vscode.page.locator('.editor-instance .monaco-diff-editor').first();
  return {
    original: editor.locator('.editor.original .view-lines'),
    modified: editor.locator('.editor.modified .view-lines'),
  };
}

export const scenarios: Scenario[] = [
  {
    name: 'mergeable: the check lists the conflicting object under it, and a click opens its diff against main now',
    prepare: async (prep) => {
      await seeded.prepare(prep);
      const world = w();
      await ok(
        world.svc.admin.patch(`${API.policies}${world.policy.id}/`, { checks: [CHECK_NAME, 'mergeable'] }),
        'the policy names mergeable',
      );
    },
    async run({ vscode, screenshot }) {
      const world = w();
      await vscode.openActivity('Change Control');
      await vscode.updateMachineSettings({ 'changeControl.serverUrl': world.svc.url });
      await seeded.signIn(vscode, world.reviewer.token, 'bob');

      await vscode.treeChildren(VIEW, 'Needs my review', (c) => c.some((r) => r.label === TITLE));
      await vscode.clickTreeItem(TITLE, { view: VIEW });
      await vscode.expandView(CHECKS);
      await vscode.step('the check "Merges cleanly" failed and opens to sw1 with its problem', async () => {
        await expectText(vscode.treeItem(MERGEABLE, { view: CHECKS }), /Failed/, TIMEOUTS.ui);
        const row = vscode.treeItem(MERGEABLE, { view: CHECKS });
        if ((await row.getAttribute('aria-expanded')) === 'false') await row.locator('.monaco-tl-twistie').click();
        await vscode.treeChildren(CHECKS, MERGEABLE, (c) =>
          c.some((r) => r.label === 'sw1' && r.description === 'Conflicts with main on rack.'),
        );
      });
      await vscode.step("a click on sw1 opens its diff against main now: main's R3, the branch's R2", async () => {
        await vscode.clickTreeItem('sw1', { view: CHECKS });
        await vscode.tab(/^sw1 \(main now ↔ after the merge\)/).waitFor({ timeout: TIMEOUTS.ui });
        const d = diffEditor(vscode);
        await expectText(d.original, yaml('rack: R3'), TIMEOUTS.ui);
        await expectText(d.modified, yaml('rack: R2'));
      });
      await vscode.clearNotifications();
      await vscode.page
        .locator('.quick-input-widget')
        .waitFor({ state: 'hidden', timeout: 5_000 })
        .catch(() => undefined);
      await screenshot('mergeable-conflict-diff');
    },
  },
];
