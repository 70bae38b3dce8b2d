// Review queues follow eligibility, and merging says what it overwrites. The seeded world gains
// carol, the only reviewer of a second rule ("Security"); bob (the network team) requests changes,
// and carol still finds the request under Needs my review. Then, approved and checked, alice's
// Merge Branch asks for the acknowledgement in words, naming sw1's rack: main now R3, the branch's R2.
import { expectText } from '../harness';
import { settled } from '../fixtures/layout';
import { ok, SeededWorld } from '../fixtures/seeded-world';
import type { Scenario } from '../suite';
import { API, makeActor, REVIEWER_GRANTS, reportCheck, type Actor } from '../../extension/seed';

const VIEW = 'Change Requests';
const TITLE = 'Move sw1 to rack R2';

const seeded = new SeededWorld();
const w = () => seeded.get();
let carol: Actor | undefined;

export const scenarios: Scenario[] = [
  {
    name: 'review queue: after someone else requests changes, the only reviewer of another rule still finds the request under Needs my review',
    prepare: async (prep) => {
      await seeded.prepare(prep);
      const world = w();
      carol = await makeActor(world.svc, 'carol', REVIEWER_GRANTS);
      await ok(
        world.svc.admin.post(API.rules, {
          policy: world.policy.id,
          name: 'Security',
          min_reviews: 1,
          users: [carol.id],
        }),
        'the security rule',
      );
      // A rule added after the submit reaches the request at its next refresh (a review is one).
      await ok(
        world.reviewer.client.post(API.reviews, {
          change_request: world.changeRequest.id,
          decision: 'reject',
          comment: 'Rack R2 has no free power feed.',
        }),
        "bob's request for changes",
      );
    },
    async run({ vscode, screenshot }) {
      await vscode.openActivity('Change Control');
      await vscode.updateMachineSettings({ 'changeControl.serverUrl': w().svc.url });
      await seeded.signIn(vscode, carol!.token, 'carol');
      await vscode.step('carol finds it under Needs my review, marked Changes requested', async () => {
        const rows = await vscode.treeChildren(VIEW, 'Needs my review', (c) => c.some((r) => r.label === TITLE));
        const row = rows.find((r) => r.label === TITLE)!;
        if (!/Changes requested/i.test(row.description)) throw new Error(`row: ${row.description}`);
      });
      await vscode.step('the status bar and the activity bar count it', async () => {
        await expectText(vscode.page.locator('.part.statusbar'), /\b1\b/);
      });
      await vscode.clearNotifications();
      await settled(vscode);
      await screenshot('queue-after-rejection');
      const mine = await ok(carol!.client.get(`${API.changeRequests}?reviewer=me`), 'reviewer=me');
      if (!mine.results.some((r: any) => r.id === w().changeRequest.id))
        throw new Error(`reviewer=me for carol: ${JSON.stringify(mine.results.map((r: any) => r.id))}`);
    },
  },
  {
    name: 'merge: the confirmation lists what the merge overwrites on main (sw1 · rack: main now R3) and asks for it in words',
    async run({ vscode, screenshot }) {
      // Both rules approve; the pipeline reports; alice merges.
      const world = w();
      const bobs = await ok(
        world.svc.admin.get(`${API.reviews}?change_request_id=${world.changeRequest.id}`),
        'reviews',
      );
      const bob = bobs.results.find((r: any) => r.reviewer.username === 'bob');
      await ok(
        world.reviewer.client.patch(`${API.reviews}${bob.id}/`, { decision: 'approve', comment: '' }),
        'bob approves',
      );
      await ok(
        carol!.client.post(API.reviews, { change_request: world.changeRequest.id, decision: 'approve', comment: '' }),
        'carol approves',
      );
      await reportCheck(world, 'success', 'build #1050 passed');
      await vscode.runCommand('Change Control: Sign Out');
      await vscode.clearNotifications();
      await seeded.signIn(vscode, world.author.token, 'alice');
      await vscode.runCommand('Change Control: Merge Branch');
      await vscode.quickPick(TITLE);
      await vscode.step(
        'the modal names the object, the attribute, main now and the branch, and the acknowledgement',
        async () => {
          const dialog = vscode.page.locator('.monaco-dialog-box');
          await expectText(
            dialog.locator('.dialog-message-text'),
            `Merge "${TITLE}"? It overwrites main's changes to 1 object.`,
            30_000,
          );
          await expectText(
            dialog.locator('.dialog-message-detail'),
            "sw1 (dcim.device) · rack: main now R3 → the branch's R2",
          );
          await dialog
            .locator('.dialog-buttons .monaco-button', { hasText: "Overwrite Main's Value and Merge" })
            .waitFor();
        },
      );
      await screenshot('merge-conflict-confirmation');
      await vscode.dialogButton('Cancel');
      const cr = await ok(world.svc.admin.get(`${API.changeRequests}${world.changeRequest.id}/`), 'the request');
      if (cr.status === 'completed') throw new Error('merged although the confirmation was cancelled');
    },
  },
];
