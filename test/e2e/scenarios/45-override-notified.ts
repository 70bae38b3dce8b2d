// The override is accountable where its author looks: alice is signed in when admin merges her
// request past its gate (through the API, acknowledging the conflict); her VS Code tells her at
// once (the stream's event), saying it was an override, by whom and why, not "merged" like any
// other; the request moves to Recently closed. On the seeded world (test/extension/seed.ts).
import { expectText } from '../harness';
import { ok, SeededWorld } from '../fixtures/seeded-world';
import type { Scenario } from '../suite';
import { API } from '../../extension/seed';

const VIEW = 'Change Requests';
const TITLE = 'Move sw1 to rack R2';
const REASON = 'Rack R1 loses power tonight';

const seeded = new SeededWorld();
const w = () => seeded.get();

export const scenarios: Scenario[] = [
  {
    name: "override notified: the author's notification says her request was merged past its gate, by whom and why",
    prepare: (prep) => seeded.prepare(prep),
    async run({ vscode, screenshot }) {
      const world = w();
      await vscode.openActivity('Change Control');
      await vscode.updateMachineSettings({ 'changeControl.serverUrl': world.svc.url });
      await seeded.signIn(vscode, world.author.token, 'alice');
      await vscode.treeChildren(VIEW, 'Mine', (c) => c.some((r) => r.label === TITLE));
      // The first look at her notifications (at sign-in) is done: what follows is new.
      await new Promise((r) => setTimeout(r, 3_000));
      await vscode.clearNotifications();

      await ok(
        world.svc.admin.post(`${API.changeRequests}${world.changeRequest.id}/override/`, {
          reason: REASON,
          acknowledge_conflicts: true,
        }),
        'admin overrides the gate',
      );
      await vscode.expectNotification(
        `Your change request was merged past its gate (an override) by admin: CHG-1042: ${TITLE}. Reason: ${REASON}`,
        30_000,
      );
      await vscode.step('the request is under Recently closed, merged by an override', async () => {
        const group = vscode.treeItem('Recently closed', { view: VIEW });
        await expectText(group, /Recently closed\s*1/);
        if ((await group.getAttribute('aria-expanded')) === 'false') await group.click();
        await vscode.treeChildren(VIEW, 'Recently closed', (c) => c.some((r) => r.label === TITLE));
      });
      await screenshot('override-notification');
    },
  },
];
