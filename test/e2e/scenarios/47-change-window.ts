// A change window as time moves it. alice's request is approved and its check passed, but its
// window opens ten minutes later on the service's clock: it sits under "Blocked" and the open
// review page says when it may merge. The clock reaches the window: with no action of the user,
// the row moves to "Ready to merge" and the page says so. The clock passes the window's end: the
// row goes back to "Blocked" and the page says the window closed.
import { expectText, TIMEOUTS, type VSCode } from '../harness';
import { ok, SeededWorld } from '../fixtures/seeded-world';
import { widenSideBar } from '../fixtures/layout';
import type { Scenario } from '../suite';
import { approvedWithCheckPassed } from '../fixtures/merge-queue';
import { API } from '../../extension/seed';

const VIEW = 'Change Requests';

const seeded = new SeededWorld();
const w = () => seeded.get();

/**
 * Waits until the groups count what they should: the seeded world's other request waits for its
 * review (Blocked), so alice's request makes Ready to merge 1 and Blocked 1, or Ready 0 and Blocked 2.
 */
async function groupsSay(vscode: VSCode, ready: boolean): Promise<void> {
  const want = ready ? { 'Ready to merge': '1', Blocked: '1' } : { 'Ready to merge': '0', Blocked: '2' };
  await vscode.step(`the groups count ${JSON.stringify(want)}`, async () => {
    const deadline = Date.now() + TIMEOUTS.ui;
    for (;;) {
      const rows = await vscode.treeRows(VIEW);
      const count = (group: string) => rows.find((r) => r.level === 1 && r.label === group)?.description;
      if (Object.entries(want).every(([group, n]) => count(group) === n)) return;
      if (Date.now() > deadline)
        throw await vscode.failure(`groups: ${JSON.stringify(rows.filter((r) => r.level === 1))}`, 'window-groups');
      await new Promise((r) => setTimeout(r, 200));
    }
  });
}

export const scenarios: Scenario[] = [
  {
    name: 'time moves the views: a change window opening on the clock moves the request to Ready to merge, and its end back to Blocked, with no user action',
    prepare: async (prep) => {
      await seeded.prepare(prep);
      const world = w();
      const now = world.svc.clock.now().getTime();
      const id = world.draft.id;
      await ok(
        world.author.client.patch(`${API.changeRequests}${id}/`, {
          scheduled_start: new Date(now + 10 * 60_000).toISOString(),
          scheduled_end: new Date(now + 70 * 60_000).toISOString(),
        }),
        'a window from ten minutes on, for an hour',
      );
      await approvedWithCheckPassed(world, id);
      const cr = await ok(world.author.client.get(`${API.changeRequests}${id}/`), 'the request');
      if (cr.ready_to_merge || !/change window opens/.test(cr.merge_blocked_reason))
        throw new Error(`before its window: ${cr.ready_to_merge} ${cr.merge_blocked_reason}`);
    },
    async run({ vscode, screenshot }) {
      const world = w();
      const wideShot = async (name: string) => {
        const restore = await widenSideBar(vscode, 320);
        try {
          await screenshot(name);
        } finally {
          await restore();
        }
      };
      const title = world.draft.title;
      await vscode.openActivity('Change Control');
      await vscode.updateMachineSettings({ 'changeControl.serverUrl': world.svc.url });
      await seeded.signIn(vscode, world.author.token, 'alice');

      await groupsSay(vscode, false);
      await vscode.clickTreeItem(title, { view: VIEW });
      const web = await vscode.webview({ has: '#cr-title', timeout: 30_000 });
      await expectText(web.locator('#cr-title'), title);
      await expectText(web.locator('#merge-reason'), /The change window opens at \d+ \w+ \d{4}, \d\d:\d\d /);
      await expectText(web.locator('#merge-until'), /^May merge from \d+ \w+ \d{4}, \d\d:\d\d /);
      await wideShot('change-window-before');

      // Ten minutes pass on the service's clock: the window opens. Nobody clicks anything.
      world.svc.clock.advance(10 * 60_000);
      await groupsSay(vscode, true);
      await expectText(web.locator('#merge-state'), '✓ Ready to merge.', TIMEOUTS.ui);
      await wideShot('change-window-open');

      // An hour later the window has closed: back to Blocked, and the page says why.
      world.svc.clock.advance(60 * 60_000);
      await groupsSay(vscode, false);
      await expectText(
        web.locator('#merge-reason'),
        /The change window closed at \d+ \w+ \d{4}, \d\d:\d\d /,
        TIMEOUTS.ui,
      );
      await screenshot('change-window-closed');
    },
  },
];
