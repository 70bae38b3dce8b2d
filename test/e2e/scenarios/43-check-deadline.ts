// Checks say what they mean, and time moves them: `ci/build` has a declared reporter (the pipeline
// `ci`) and a 2-minute timeout. While pending, the Checks view and the review page show its
// deadline and name its reporter; two minutes later on the service's clock, with no action of the
// user, it reads "Timed out" (never a pass or an ordinary failure mark) in the Checks view, on
// the page, and on the request's row. Seen as bob, on the seeded world (test/extension/seed.ts).
import { expectText, TIMEOUTS, type VSCode } from '../harness';
import { widenSideBar } from '../fixtures/layout';
import { ok, SeededWorld } from '../fixtures/seeded-world';
import type { Scenario } from '../suite';
import { API, CHECK_NAME } from '../../extension/seed';

const VIEW = 'Change Requests';
const CHECKS = 'Checks';

const seeded = new SeededWorld();
const w = () => seeded.get();

/** Waits until the Checks view's row of `ci/build` has a description matching `description`. */
async function checkRow(vscode: VSCode, description: RegExp): Promise<string> {
  const deadline = Date.now() + TIMEOUTS.ui;
  for (;;) {
    const rows = await vscode.treeRows(CHECKS);
    const row = rows.find((r) => r.label === CHECK_NAME);
    if (row && description.test(row.description)) return row.description;
    if (Date.now() > deadline) throw await vscode.failure(`Checks rows: ${JSON.stringify(rows)}`, 'checks');
    await new Promise((r) => setTimeout(r, 200));
  }
}

export const scenarios: Scenario[] = [
  {
    name: 'check deadline: a pending check shows its deadline and its declared reporter, and times out on the clock with no user action, never with a pass mark',
    prepare: async (prep) => {
      await seeded.prepare(prep);
      const world = w();
      await ok(
        world.svc.admin.patch(`${API.policies}${world.policy.id}/`, {
          check_settings: {
            [CHECK_NAME]: { reporter: { users: [world.pipeline.id], groups: [] }, timeout_minutes: 2 },
          },
        }),
        'ci/build: reported by ci alone, within 2 minutes',
      );
      // Submitted once the policy says so: its check is pending with a deadline.
      await ok(world.author.client.post(`${API.changeRequests}${world.draft.id}/submit/`, {}), 'submit the draft');
    },
    async run({ vscode, screenshot }) {
      const world = w();
      const title = world.draft.title;
      await vscode.openActivity('Change Control');
      await vscode.updateMachineSettings({ 'changeControl.serverUrl': world.svc.url });
      await seeded.signIn(vscode, world.reviewer.token, 'bob');

      await vscode.treeChildren(VIEW, 'Needs my review', (c) => c.some((r) => r.label === title));
      await vscode.clickTreeItem(title, { view: VIEW });
      await vscode.expandView(CHECKS);
      await vscode.step('the Checks view shows the pending check with its deadline', () =>
        checkRow(vscode, /^Pending · required · due /),
      );
      const web = await vscode.webview({ has: '#cr-title', timeout: 30_000 });
      await expectText(web.locator('#cr-title'), title);
      const check = web.locator(`li.check[data-check="${CHECK_NAME}"]`);
      await vscode.step('the page shows the deadline and names the declared reporter', async () => {
        await expectText(check.locator('.check-deadline'), /^Fails unless reported by \d/);
        await expectText(check.locator('.check-reporter'), 'Only ci may report it.');
      });

      // Two minutes pass on the service's clock. Nobody clicks anything.
      world.svc.clock.advance(2 * 60_000);

      await vscode.step('the Checks view says Timed out', () => checkRow(vscode, /^Timed out · required/));
      await vscode.step('the page says Timed out, with no pass or failure mark', async () => {
        await expectText(check.locator('.timed-out'), 'Timed out', TIMEOUTS.ui);
        const symbol = ((await check.locator('.symbol').textContent()) ?? '').trim();
        if (symbol !== '◷') throw new Error(`the check's mark: ${symbol}`);
        if ((await check.locator('.check-deadline').count()) !== 0) throw new Error('a deadline is still shown');
      });
      await vscode.step("the request's row says the check timed out", () =>
        vscode.treeChildren(VIEW, 'Needs my review', (c) =>
          c.some((r) => r.label === title && r.description.includes(`check ${CHECK_NAME} timed out`)),
        ),
      );
      await check.scrollIntoViewIfNeeded();
      await vscode.clearNotifications();
      await vscode.page
        .locator('.quick-input-widget')
        .waitFor({ state: 'hidden', timeout: 5_000 })
        .catch(() => undefined);
      const restore = await widenSideBar(vscode, 220);
      try {
        await screenshot('check-timed-out');
      } finally {
        await restore();
      }

      const checks = await ok(
        world.reviewer.client.get(`${API.checks}?change_request_id=${world.draft.id}`),
        'the checks',
      );
      const ci = checks.results.find((c: any) => c.name === CHECK_NAME);
      if (ci.status !== 'failure' || ci.timed_out !== true || ci.deadline !== null)
        throw new Error(`ci/build: ${JSON.stringify(ci)}`);
    },
  },
];
