// The override is accountable where people look: a request merged past its gate (through the API,
// by admin, who holds change_control.override_gate) shows who, when, why and what it set aside on
// the review page of a reviewer who reads no changelog, in its timeline and its merge section;
// and it is not in the merge queue. Seen as bob, on the seeded world (test/extension/seed.ts).
import { expectText } from '../harness';
import { ok, SeededWorld } from '../fixtures/seeded-world';
import type { Scenario } from '../suite';
import { API, CC } from '../../extension/seed';

const VIEW = 'Change Requests';
const TITLE = 'Move sw1 to rack R2';
const REASON = 'Outage fix: sw1 must leave rack R1 tonight';

const seeded = new SeededWorld();
const w = () => seeded.get();

export const scenarios: Scenario[] = [
  {
    name: 'override: a request merged past its gate shows who, why and what it set aside on the review page, and is not queued',
    prepare: async (prep) => {
      await seeded.prepare(prep);
      const world = w();
      // The gate refuses it (no approval, ci/build pending, a conflict with main): admin overrides.
      await ok(
        world.svc.admin.post(`${API.changeRequests}${world.changeRequest.id}/override/`, {
          reason: REASON,
          acknowledge_conflicts: true,
        }),
        'override the gate',
      );
    },
    async run({ vscode, screenshot }) {
      await vscode.openActivity('Change Control');
      await vscode.updateMachineSettings({ 'changeControl.serverUrl': w().svc.url });
      await seeded.signIn(vscode, w().reviewer.token, 'bob');

      await vscode.clickTreeItem('Recently closed', { view: VIEW });
      await vscode.step('the request is under Recently closed', () =>
        vscode.treeChildren(VIEW, 'Recently closed', (c) => c.some((r) => r.label === TITLE)),
      );
      await vscode.clickTreeItem(TITLE, { view: VIEW });
      const web = await vscode.webview({ has: '#cr-title', timeout: 30_000 });
      await expectText(web.locator('#cr-title'), TITLE);

      await vscode.step(
        'the merge section says it was merged by an override: who, when, why, what it set aside',
        async () => {
          await expectText(web.locator('#merge-state'), 'Merged by an override.');
          await expectText(
            web.locator('#merge-override'),
            new RegExp(`Merged past the gate by admin on .*: ${REASON}`),
          );
          await expectText(web.locator('#merge-override'), /It set aside: .*approval/);
          if ((await web.locator('#merge-queue').count()) !== 0)
            throw new Error('a merged request shows a queue place');
        },
      );
      await vscode.step('the timeline has the override, visible to a reviewer', async () => {
        const entry = web.locator('.event-override');
        await entry.scrollIntoViewIfNeeded();
        await expectText(entry, new RegExp(`admin merged it past the gate \\(override\\): ${REASON}`));
        await expectText(entry, /What it set aside: /);
      });
      await screenshot('override');

      // The service agrees: completed, with no place in the queue, and absent from merge-queue/.
      const cr = await ok(w().reviewer.client.get(`${API.changeRequests}${w().changeRequest.id}/`), 'the request');
      if (cr.status !== 'completed' || cr.queue_position !== null || cr.override?.reason !== REASON)
        throw new Error(
          `status ${cr.status}, queue_position ${cr.queue_position}, override ${JSON.stringify(cr.override)}`,
        );
      const queue = await ok(w().reviewer.client.get(`${CC}merge-queue/`), 'the merge queue');
      if (queue.results.some((e: { id: number }) => e.id === w().changeRequest.id))
        throw new Error('the merged request is listed in the merge queue');
    },
  },
];
