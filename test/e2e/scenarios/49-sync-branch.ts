// Conflicts lead somewhere: Sync Branch with Main shows the service's dry run first (a modal naming
// what the sync would rebase, and the conflict it settles in the branch's favour: sw1's rack),
// and syncs only once confirmed. From the palette (synced), then
// from the request's context menu in Change Requests (cancelled: nothing written). Main changed
// sw1's serial after the branch moved it; seen as alice, on the seeded world
// (test/extension/seed.ts).
import { expectText } from '../harness';
import { ok, SeededWorld } from '../fixtures/seeded-world';
import type { Scenario } from '../suite';
import { API } from '../../extension/seed';

const VIEW = 'Change Requests';
const TITLE = 'Move sw1 to rack R2';
const BRANCH = 'move-sw1';

const seeded = new SeededWorld();
const w = () => seeded.get();

/** Main writes sw1's serial (an attribute the branch leaves alone). */
async function mainWritesSerial(serial: string): Promise<void> {
  const world = w();
  const sw1 = (await ok(world.svc.admin.get(`${API.devices}?name=sw1`), 'sw1 on main')).results[0];
  await ok(world.svc.admin.patch(`${API.devices}${sw1.id}/`, { serial }), 'main writes the serial');
}

/** sw1 as the branch has it. */
async function sw1InBranch(): Promise<any> {
  const world = w();
  const inBranch = world.author.client.inBranch(world.branch.schemaId);
  return (await ok(inBranch.get(`${API.devices}?name=sw1`), 'sw1 in the branch')).results[0];
}

export const scenarios: Scenario[] = [
  {
    name: 'sync branch: from the palette, the dry run is shown first (a modal naming what it rebases), then the sync',
    prepare: async (prep) => {
      await seeded.prepare(prep);
      await mainWritesSerial('FOC9999Z');
    },
    async run({ vscode, screenshot }) {
      const world = w();
      await vscode.openActivity('Change Control');
      await vscode.updateMachineSettings({ 'changeControl.serverUrl': world.svc.url });
      await seeded.signIn(vscode, world.author.token, 'alice');
      await vscode.clearNotifications();

      await vscode.runCommand('Change Control: Sync Branch with Main…');
      await vscode.quickPick(TITLE);
      await vscode.step('the dry run comes first: the modal names what the sync rebases', async () => {
        const dialog = vscode.page.locator('.monaco-dialog-box');
        await expectText(dialog.locator('.dialog-message-text'), `Sync branch ${BRANCH} with main?`, 30_000);
        await expectText(dialog.locator('.dialog-message-detail'), '1 change is rebased on main as it is now: sw1.');
        // The rack conflict: the sync settles it in the branch's favour, and says so.
        await expectText(
          dialog.locator('.dialog-message-detail'),
          /merging replaces main's value without asking:\s+• sw1 \(dcim\.device\) · rack: main now R3 → the branch's R2/,
        );
        await expectText(
          dialog.locator('.dialog-message-detail'),
          /Reviews given on the changes a sync moves go stale/,
        );
        await dialog.locator('.dialog-buttons .monaco-button', { hasText: 'Sync Branch' }).waitFor();
      });
      const before = await sw1InBranch();
      if (before.serial !== 'FOC1234X') throw new Error(`the dry run wrote the branch: serial ${before.serial}`);
      await screenshot('sync-branch-dry-run');

      await vscode.dialogButton('Sync Branch');
      await vscode.expectNotification(`Branch ${BRANCH} synced with main.`, 30_000);
      await vscode.step("the branch has main's serial and keeps its own rack: no conflict any more", async () => {
        const after = await sw1InBranch();
        if (after.serial !== 'FOC9999Z' || after.rack !== 'R2')
          throw new Error(`sw1 in the branch: ${JSON.stringify(after)}`);
        const cr = await ok(world.author.client.get(`${API.changeRequests}${world.changeRequest.id}/`), 'the request');
        if (cr.has_conflicts) throw new Error('the request still conflicts after the sync');
        const branch = await ok(world.author.client.get(`${API.branches}${world.branch.id}/`), 'the branch');
        if (!branch.last_sync) throw new Error('the branch has no last_sync');
      });
    },
  },
  {
    name: "sync branch: from the request's context menu, the dry run first; cancelled, nothing is written",
    async run({ vscode }) {
      const world = w();
      await mainWritesSerial('FOC0000A');
      const synced = (await ok(world.author.client.get(`${API.branches}${world.branch.id}/`), 'the branch')).last_sync;
      await vscode.openActivity('Change Control');
      const row = vscode.treeItem(TITLE, { view: VIEW }).first();
      await row.waitFor();
      await row.click({ button: 'right' });
      const item = vscode.page.locator('.context-view .action-label', { hasText: 'Sync Branch with Main' });
      await item.first().waitFor();
      // VS Code's menu ignores a click that comes too soon after it opened: the pointer rests first,
      // and Enter chooses the item still highlighted when the click did not take.
      await item.first().hover();
      await vscode.page.waitForTimeout(300);
      await item.first().click();
      const menu = vscode.page.locator('.context-view .monaco-menu');
      if (await menu.isVisible().catch(() => false)) {
        await vscode.page.waitForTimeout(500);
        if (await menu.isVisible().catch(() => false)) await vscode.page.keyboard.press('Enter');
      }
      const dialog = vscode.page.locator('.monaco-dialog-box');
      await expectText(dialog.locator('.dialog-message-text'), `Sync branch ${BRANCH} with main?`, 30_000);
      await expectText(dialog.locator('.dialog-message-detail'), '1 change is rebased on main as it is now: sw1.');
      await vscode.dialogButton('Cancel');
      const after = await sw1InBranch();
      const branch = await ok(world.author.client.get(`${API.branches}${world.branch.id}/`), 'the branch');
      if (after.serial !== 'FOC9999Z' || branch.last_sync !== synced)
        throw new Error(`cancelled, yet written: serial ${after.serial}, last_sync ${branch.last_sync}`);
    },
  },
];
