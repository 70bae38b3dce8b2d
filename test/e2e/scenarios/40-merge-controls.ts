// What stops or qualifies a merge, where a reviewer looks for it: a freeze in force on the request
// (its row in Change Requests, the merge section of the review page) and a check result reported
// on an earlier version of the branch (outdated, in the Checks view and on the review page).
// Set up through the API on the seeded world (test/extension/seed.ts); seen as bob, the reviewer.
import { expectText, TIMEOUTS } from '../harness';
import { ok, SeededWorld } from '../fixtures/seeded-world';
import type { Scenario } from '../suite';
import { API, CHECK_NAME } from '../../extension/seed';

const VIEW = 'Change Requests';
const TITLE = 'Move sw1 to rack R2';
const FREEZE = 'Quarter close';
const OLD_DIGEST = 'a'.repeat(64);

const seeded = new SeededWorld();
const w = () => seeded.get();

export const scenarios: Scenario[] = [
  {
    name: 'merge controls: a freeze in force and an outdated check result show on the request, in the Checks view and on the review page',
    prepare: async (prep) => {
      await seeded.prepare(prep);
      const world = w();
      const now = world.svc.clock.now().getTime();
      await ok(
        world.svc.admin.post(API.freezes, {
          name: FREEZE,
          start: new Date(now - 3_600_000).toISOString(),
          end: new Date(now + 3 * 3_600_000).toISOString(),
        }),
        'create the freeze',
      );
      // The pipeline reports on a version of the branch it no longer is.
      const checks = await ok(
        world.pipeline.client.get(`${API.checks}?change_request_id=${world.changeRequest.id}`),
        'list checks',
      );
      const check = checks.results.find((c: any) => c.name === CHECK_NAME);
      await ok(
        world.pipeline.client.patch(`${API.checks}${check.id}/`, {
          status: 'success',
          summary: 'build #1041 passed',
          digest: OLD_DIGEST,
        }),
        'report on an old digest',
      );
    },
    async run({ vscode, screenshot }) {
      await vscode.openActivity('Change Control');
      await vscode.updateMachineSettings({ 'changeControl.serverUrl': w().svc.url });
      await seeded.signIn(vscode, w().reviewer.token, 'bob');

      await vscode.step("the request's row says it is frozen", async () => {
        const rows = await vscode.treeChildren(VIEW, 'Needs my review', (c) => c.some((r) => r.label === TITLE));
        const row = rows.find((r) => r.label === TITLE)!;
        if (!/frozen/.test(row.description)) throw new Error(`row description: ${row.description}`);
      });

      await vscode.clickTreeItem(TITLE, { view: VIEW });
      await vscode.expandView('Checks');
      await vscode.step('the Checks view marks the result outdated, with no pass mark', () =>
        expectText(
          vscode.treeItem(CHECK_NAME, { view: 'Checks' }),
          /Outdated \(passed, no longer counts\)/,
          TIMEOUTS.ui,
        ),
      );

      const web = await vscode.webview({ has: '#cr-title', timeout: 30_000 });
      await expectText(web.locator('#cr-title'), TITLE);
      await vscode.step('the review page names the freeze and marks the check outdated', async () => {
        await expectText(web.locator('.freeze.active').first(), `Frozen by "${FREEZE}" until`);
        await expectText(web.locator('.outdated').first(), /outdated/i);
      });
      await vscode.step('the merge section writes times as the reader reads them (no ISO time)', async () => {
        const reason = (await web.locator('#merge-reason').textContent()) ?? '';
        if (!reason.includes(FREEZE)) throw new Error(`the reason: ${reason}`);
        if (/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/.test(reason)) throw new Error(`an ISO time in the reason: ${reason}`);
      });
      await screenshot('merge-controls');

      // The service agrees: the freeze blocks, and the outdated result does not clear the gate.
      const cr = await ok(w().svc.admin.get(`${API.changeRequests}${w().changeRequest.id}/`), 'the request');
      if (!String(cr.merge_blocked_reason).includes(FREEZE))
        throw new Error(`merge_blocked_reason: ${cr.merge_blocked_reason}`);
      // Not only time holds it (bob has not approved, the result is outdated): no instant to wait for.
      if (cr.blocked_until !== null) throw new Error(`blocked_until: ${cr.blocked_until}`);
    },
  },
];
