// Menus follow what the service says the caller may do (`actions`): bob, a reviewer, finds Review
// in a request's context menu but neither Edit Title nor Override and Merge… (alice, its author,
// finds Edit Title); from the palette, Override and Merge… says, for each open request, why it
// is not allowed, naming the missing permission. On the seeded world (test/extension/seed.ts).
import { expectText, TIMEOUTS, type VSCode } from '../harness';
import { ok, SeededWorld } from '../fixtures/seeded-world';
import type { Scenario } from '../suite';
import { API } from '../../extension/seed';

const VIEW = 'Change Requests';
const TITLE = 'Move sw1 to rack R2';
const OVERRIDE_REFUSAL = 'You need change_control.override_gate to override the merge gate of this change request.';

const seeded = new SeededWorld();
const w = () => seeded.get();

/** The labels of a request row's context menu (closed again with Escape). */
async function contextMenu(vscode: VSCode, label: string): Promise<string[]> {
  const row = vscode.treeItem(label, { view: VIEW }).first();
  await row.waitFor({ timeout: TIMEOUTS.ui });
  await row.click({ button: 'right' });
  const items = vscode.page.locator('.context-view .action-item .action-label');
  await items.first().waitFor({ timeout: TIMEOUTS.ui });
  const labels = (await items.allInnerTexts()).map((t) => t.trim()).filter((t) => t);
  await vscode.page.keyboard.press('Escape');
  return labels;
}

export const scenarios: Scenario[] = [
  {
    name: 'menus follow actions: a reviewer is offered Review, not Edit Title nor Override; the palette says which permission Override needs',
    prepare: async (prep) => {
      await seeded.prepare(prep);
      const world = w();
      // Two open requests bob may view: the palette lists why, for each.
      await ok(world.author.client.post(`${API.changeRequests}${world.draft.id}/submit/`, {}), 'submit the draft');
    },
    async run({ vscode, screenshot }) {
      const world = w();
      await vscode.openActivity('Change Control');
      await vscode.updateMachineSettings({ 'changeControl.serverUrl': world.svc.url });
      await seeded.signIn(vscode, world.reviewer.token, 'bob');

      await vscode.step("bob's context menu: Review, no Edit Title, no Override and Merge…", async () => {
        await vscode.treeChildren(VIEW, 'Needs my review', (c) => c.some((r) => r.label === TITLE));
        const labels = await contextMenu(vscode, TITLE);
        if (!labels.includes('Review') || labels.some((l) => /^Edit Title|^Override/.test(l)))
          throw new Error(`bob's menu: ${JSON.stringify(labels)}`);
      });

      await vscode.clearNotifications();
      await vscode.runCommand('Change Control: Override and Merge…');
      await vscode.step('the palette says why no request allows it, naming the permission', async () => {
        const rows = await vscode.expectQuickPick(new RegExp(TITLE));
        const widget = vscode.page.locator('.quick-input-widget');
        await expectText(
          widget.locator('.quick-input-title'),
          /^No change request allows Override and Merge… for you now/,
        );
        await expectText(widget.locator('.quick-input-list .monaco-list-row', { hasText: TITLE }), OVERRIDE_REFUSAL);
        if (rows.length === 0) throw new Error('no rows');
      });
      await screenshot('override-refusal-names-permission');
      await vscode.page.keyboard.press('Escape');

      await vscode.runCommand('Change Control: Sign Out');
      await vscode.clearNotifications();
      await seeded.signIn(vscode, world.author.token, 'alice');
      await vscode.step("alice's context menu on her request offers Edit Title", async () => {
        await vscode.treeChildren(VIEW, 'Mine', (c) => c.some((r) => r.label === TITLE));
        const labels = await contextMenu(vscode, TITLE);
        if (!labels.includes('Edit Title')) throw new Error(`alice's menu: ${JSON.stringify(labels)}`);
      });
    },
  },
];
