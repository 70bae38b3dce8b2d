// The merge queue where an author looks, and time moving the views. Two of alice's requests are
// ready and set to merge automatically while another service instance holds the queue (so they
// wait): the Merge Queue view lists them with their places, their rows say `queued #N`. Then a
// freeze that starts ten minutes later (on the service's clock) begins: with no action of the
// user, the queue says it waits for the freeze to end, the rows leave "Ready to merge" for
// "Blocked" marked `frozen`, and the open review page no longer says "merging now or next".
import { expectText, TIMEOUTS, type VSCode } from '../harness';
import { ok, SeededWorld } from '../fixtures/seeded-world';
import { holdQueueElsewhere, readyToMergeAutomatically, requestAddingDevice } from '../fixtures/merge-queue';
import { settled, widenSideBar } from '../fixtures/layout';
import type { Scenario } from '../suite';
import { API } from '../../extension/seed';

const VIEW = 'Change Requests';
const QUEUE = 'Merge Queue';
const FIRST = 'Add edge-router-1';
const SECOND = 'Add access switch sw10';
const FREEZE = 'Year-end change freeze';

const seeded = new SeededWorld();
const w = () => seeded.get();

/** The row of the Merge Queue view whose label names the request, once its description matches. */
async function queueRow(vscode: VSCode, title: string, description: RegExp): Promise<void> {
  await vscode.step(`the Merge Queue lists "${title}" as ${description}`, async () => {
    const deadline = Date.now() + TIMEOUTS.ui;
    for (;;) {
      const rows = await vscode.treeRows(QUEUE);
      const row = rows.find((r) => r.label.endsWith(title));
      if (row && description.test(row.description)) return;
      if (Date.now() > deadline) throw await vscode.failure(`Merge Queue rows: ${JSON.stringify(rows)}`, 'merge-queue');
      await new Promise((r) => setTimeout(r, 200));
    }
  });
}

/** Waits until a group of Change Requests counts `count` (its description). */
async function groupCount(vscode: VSCode, group: string, count: string): Promise<void> {
  const deadline = Date.now() + TIMEOUTS.ui;
  for (;;) {
    const rows = await vscode.treeRows(VIEW);
    if (rows.some((r) => r.level === 1 && r.label === group && r.description === count)) return;
    if (Date.now() > deadline)
      throw await vscode.failure(`${group} is not ${count}: ${JSON.stringify(rows)}`, 'groups');
    await new Promise((r) => setTimeout(r, 200));
  }
}

export const scenarios: Scenario[] = [
  {
    name: 'merge queue: the Merge Queue view lists queued requests with their places, and their rows say queued #N',
    prepare: async (prep) => {
      await seeded.prepare(prep);
      const world = w();
      await holdQueueElsewhere(world);
      const first = await readyToMergeAutomatically(world, world.draft.id);
      const second = await readyToMergeAutomatically(
        world,
        await requestAddingDevice(world, 'add-access-switch', 'sw10', SECOND),
      );
      if (first !== 1 || second !== 2) throw new Error(`queue positions ${first}, ${second}`);
    },
    async run({ vscode, screenshot }) {
      await vscode.openActivity('Change Control');
      await vscode.updateMachineSettings({ 'changeControl.serverUrl': w().svc.url });
      await seeded.signIn(vscode, w().author.token, 'alice');

      await vscode.expandView(QUEUE);
      await vscode.treeItem(`#1 ${FIRST}`, { view: QUEUE }).waitFor({ timeout: TIMEOUTS.ui });
      await queueRow(vscode, FIRST, /^next to merge$/);
      await queueRow(vscode, SECOND, /^waiting its turn$/);
      await expectText(vscode.view(QUEUE).locator('.pane-header .description').first(), '2');

      await vscode.step('her rows say queued #1 and #2 first; two are ready to merge', async () => {
        const rows = await vscode.treeChildren(VIEW, 'Mine', (c) => c.length === 3);
        const first = rows.find((r) => r.label === FIRST);
        const second = rows.find((r) => r.label === SECOND);
        if (!first?.description.startsWith('queued #1') || !second?.description.startsWith('queued #2'))
          throw new Error(`rows: ${JSON.stringify(rows)}`);
        await groupCount(vscode, 'Ready to merge', '2');
      });
      await settled(vscode, { clearNotifications: true });
      const restore = await widenSideBar(vscode, 320);
      try {
        await screenshot('merge-queue-view');
      } finally {
        await restore();
      }
    },
  },
  {
    name: 'time moves the views: a freeze beginning on the clock turns the queue to waiting for the freeze, the rows to frozen, and the page, with no user action',
    async run({ vscode, screenshot }) {
      const world = w();
      const now = world.svc.clock.now().getTime();
      await ok(
        world.svc.admin.post(API.freezes, {
          name: FREEZE,
          start: new Date(now + 10 * 60_000).toISOString(),
          end: new Date(now + 4 * 3_600_000).toISOString(),
        }),
        'a freeze from ten minutes on',
      );
      // The freeze written: the rows announce it (within 7 days), the queue still runs.
      await vscode.step('the rows say a freeze is ahead', async () => {
        await vscode.treeChildren(VIEW, 'Mine', (c) =>
          c.some((r) => r.label === FIRST && /freeze ahead/.test(r.description)),
        );
      });

      await vscode.clickTreeItem(FIRST, { view: VIEW });
      const web = await vscode.webview({ has: '#cr-title', timeout: 30_000 });
      await expectText(web.locator('#cr-title'), FIRST);
      await expectText(web.locator('#merge-queue'), 'First in the merge queue (merging now or next).');

      // Ten minutes pass on the service's clock: the freeze begins. Nobody clicks anything.
      world.svc.clock.advance(10 * 60_000);

      await queueRow(vscode, FIRST, new RegExp(`^waiting for the freeze "${FREEZE}" to end \\(`));
      await queueRow(vscode, SECOND, new RegExp(`^waiting for the freeze "${FREEZE}" to end \\(`));
      await vscode.step('the rows left Ready to merge for Blocked, marked frozen', async () => {
        await vscode.treeChildren(VIEW, 'Mine', (c) =>
          [FIRST, SECOND].every((t) => c.some((r) => r.label === t && /queued #\d · .*frozen/.test(r.description))),
        );
        await groupCount(vscode, 'Ready to merge', '0');
        await groupCount(vscode, 'Blocked', '3');
      });
      await vscode.step('the open page says the queue waits for the freeze (not "merging now or next")', async () => {
        await expectText(web.locator('#merge-queue'), /waiting for the freeze to end/, TIMEOUTS.ui);
        const text = (await web.locator('#merge-queue').textContent()) ?? '';
        if (/merging now or next/.test(text)) throw new Error(`the queue line: ${text}`);
        await expectText(web.locator('.freeze.active').first(), `Frozen by "${FREEZE}" until`);
      });
      await settled(vscode, { clearNotifications: true });
      const restore = await widenSideBar(vscode, 320);
      try {
        await screenshot('merge-queue-frozen');
      } finally {
        await restore();
      }

      // The service agrees: both keep their places, waiting for the freeze.
      const queue = await ok(world.author.client.get('/api/plugins/change-control/merge-queue/'), 'the queue');
      const waiting = queue.results.map((e: any) => [e.position, e.waiting_for_freeze?.name]);
      if (
        JSON.stringify(waiting) !==
        JSON.stringify([
          [1, FREEZE],
          [2, FREEZE],
        ])
      )
        throw new Error(`merge-queue/: ${JSON.stringify(queue.results)}`);
    },
  },
];
