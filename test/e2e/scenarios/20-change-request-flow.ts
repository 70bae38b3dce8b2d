// A change request worked from review to merge in the packaged extension, against a service this
// file starts and seeds (test/extension/seed.ts): users alice (author), bob (reviewer) and ci (a
// pipeline); a policy whose rule names bob and which requires the reported check ci/build; the
// branch move-sw1 (sw1 moved to rack R2, conflicting with main, which moved it to R3; sw2 added)
// with its request "Move sw1 to rack R2", submitted; and a draft request of alice.
//
// Every step is done through the UI, then checked through the API. The scenarios run in order
// and build on each other (the reviewer's part, then the author's).
import { assertEqual, expectText, TIMEOUTS, type VSCode } from '../harness';
import { SeededWorld } from '../fixtures/seeded-world';
import type { Scenario } from '../suite';
import { API, CHECK_NAME, reportCheck } from '../../extension/seed';

const VIEW = 'Change Requests';
const TITLE = 'Move sw1 to rack R2';
const BRANCH = 'move-sw1';

const seeded = new SeededWorld();
const w = () => seeded.get();

/** The request as the service has it now (admin's view). */
async function apiRequest(): Promise<any> {
  const res = await w().svc.admin.get(`${API.changeRequests}${w().changeRequest.id}/`);
  if (res.status !== 200) throw new Error(`GET change request: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

async function apiBranchStatus(): Promise<string> {
  return (await w().svc.admin.get(`${API.branches}${w().branch.id}/`)).body.status;
}

/** Opens the request's panel from the Change Requests tree and returns its content. */
async function openPanel(vscode: VSCode) {
  await vscode.openActivity('Change Control');
  await vscode.clickTreeItem(TITLE, { view: VIEW });
  const web = await vscode.webview({ has: '#cr-title', timeout: 30_000 });
  await expectText(web.locator('#cr-title'), TITLE);
  await web.locator(`#change-${w().changes.sw1}`).waitFor();
  return web;
}

export const scenarios: Scenario[] = [
  {
    name: 'change requests: the reviewer signs in and finds the submitted request under Needs my review',
    prepare: (prep) => seeded.prepare(prep),
    async run({ vscode, screenshot }) {
      await vscode.openActivity('Change Control');
      await vscode.updateMachineSettings({ 'changeControl.serverUrl': w().svc.url });
      await vscode.step('not signed in to the seeded service', () =>
        expectText(vscode.view(VIEW).locator('.welcome-view-content'), 'You are not connected', 30_000),
      );
      await seeded.signIn(vscode, w().reviewer.token, 'bob');

      await vscode.step('Needs my review lists the request', async () => {
        const children = await vscode.treeChildren(VIEW, 'Needs my review', (c) => c.some((r) => r.label === TITLE));
        assertEqual(
          children.map((r) => r.label),
          [TITLE],
          'Needs my review',
        );
        const row = children[0];
        if (!/CHG-1042 · Needs review · High · conflicts/.test(row.description))
          throw new Error(`row description: ${row.description}`);
      });
      await vscode.step('the other groups', async () => {
        const rows = await vscode.treeRows(VIEW);
        const groups = Object.fromEntries(rows.filter((r) => r.level === 1).map((r) => [r.label, r.description]));
        assertEqual(
          groups,
          {
            'Needs my review': '1',
            Mine: '0',
            Drafts: '1',
            'Ready to merge': '0',
            Blocked: '1',
            'Recently closed': '0',
          },
          'group counts',
        );
        assertEqual(
          (await vscode.treeChildren(VIEW, 'Drafts')).map((r) => r.label),
          [w().draft.title],
          'Drafts',
        );
        assertEqual(
          (await vscode.treeChildren(VIEW, 'Blocked')).map((r) => r.label),
          [TITLE],
          'Blocked',
        );
      });
      // The reviewer is told once, quietly, that the request waits for them.
      await vscode.expectNotification('Change request waiting for your review: CHG-1042: Move sw1 to rack R2');
      await screenshot('tree');
      // The API agrees: bob is the outstanding reviewer.
      const listed = await w().svc.as(w().reviewer.token).get(`${API.changeRequests}?reviewer=me`);
      assertEqual(
        listed.body.results.map((r: any) => r.id),
        [w().changeRequest.id],
        'reviewer=me through the API',
      );

      // A request that starts waiting for bob later is told at once (the event stream wakes the
      // notifications), not at the next timed read (60 s). The draft goes back as it was.
      const author = w().svc.as(w().author.token);
      const submitted = await author.post(`${API.changeRequests}${w().draft.id}/submit/`, {});
      if (submitted.status !== 200)
        throw new Error(`submit the draft: ${submitted.status} ${JSON.stringify(submitted.body)}`);
      const notified = await vscode
        .expectNotification(`Change request waiting for your review: CHG-1043: ${w().draft.title}`, 15_000)
        .then(
          () => null,
          (err: unknown) => err,
        );
      const back = await author.post(`${API.changeRequests}${w().draft.id}/return-to-draft/`, {});
      if (notified) throw notified;
      if (back.status !== 200)
        throw new Error(`return the draft to draft: ${back.status} ${JSON.stringify(back.body)}`);
      await vscode.clearNotifications();
    },
  },
  {
    name: "change request panel: the branch's changes (before/after, a conflict marked), the approval panel, the checks",
    async run({ vscode, screenshot }) {
      const web = await openPanel(vscode);
      const { sw1, sw2 } = w().changes;
      await vscode.step('header', async () => {
        await expectText(web.locator('#cr-status'), 'Needs review');
        await expectText(web.locator('#cr-branch'), BRANCH);
        await expectText(web.locator('.cr-header .facts'), 'CHG-1042');
      });
      await vscode.step('sw1: rack R1 → R2 while main moved it to R3, marked as a conflict', async () => {
        const rack = web.locator(`#change-${sw1} [data-attr="rack"]`);
        await expectText(rack.locator('.line.removed'), 'R1');
        await expectText(rack.locator('.line.added'), 'R2');
        await expectText(rack.locator('.line.added .ch'), '2');
        await expectText(rack.locator('.current'), 'Main now: R3');
        await expectText(rack.locator('.attr-head'), 'conflict');
        if (!(await rack.getAttribute('class'))?.includes('conflict'))
          throw new Error('the rack row is not marked as a conflict');
        await expectText(web.locator(`#change-${sw1} .warning`), 'Conflicts with main: rack');
        const status = web.locator(`#change-${sw1} [data-attr="status"]`);
        await expectText(status.locator('.line.removed'), 'active');
        await expectText(status.locator('.line.added'), 'planned');
      });
      await vscode.step('sw2: created', async () => {
        await expectText(web.locator(`#change-${sw2} h3`), 'Created sw2');
        await expectText(web.locator(`#change-${sw2} [data-attr="rack"] .line.added`), 'R2');
        if (await web.locator(`#change-${sw2} .line.removed`).count())
          throw new Error('a created object shows removed lines');
      });
      await vscode.step('approval panel', async () => {
        const rule = web.locator('#approval .rule');
        await expectText(rule.locator('.rule-head'), 'Network team 0 of 1 approval');
        await expectText(rule, 'May approve: bob');
        await expectText(rule, 'Waiting for: bob');
        await expectText(web.locator('#approval-state'), 'The policies are not satisfied yet.');
      });
      await vscode.step('merge state and checks', async () => {
        await expectText(web.locator('#merge-reason'), `Required check "${CHECK_NAME}" is pending.`);
        await expectText(web.locator('#merge-conflicts'), 'The branch conflicts with main.');
        await expectText(web.locator(`#checks li[data-check="${CHECK_NAME}"]`), 'Pending · required · blocks merge');
      });
      await vscode.step("the Checks view shows the request's checks", async () => {
        await vscode.expandView('Checks');
        await vscode.treeItem(CHECK_NAME, { view: 'Checks' }).waitFor();
        const [check] = await vscode.treeRows('Checks');
        assertEqual(
          check,
          { label: CHECK_NAME, description: 'Pending · required', level: 1, expanded: null },
          'Checks view',
        );
      });
      await screenshot('webview');
    },
  },
  {
    name: 'review page: at 400 px wide the merge gate and the decision show without scrolling, before the changes in keyboard order',
    async run({ vscode, screenshot }) {
      const web = await openPanel(vscode);
      const { sw1 } = w().changes;
      const page = vscode.page;
      const before = page.viewportSize();
      await vscode.runCommand('View: Toggle Primary Side Bar Visibility');
      try {
        await vscode.step('narrow the editor to about 400 px', async () => {
          let width = 460;
          for (let i = 0; i < 3; i++) {
            await page.setViewportSize({ width, height: before?.height ?? 900 });
            await page.waitForTimeout(500);
            const inner = await web.locator('body').evaluate(() => window.innerWidth);
            if (Math.abs(inner - 400) <= 8) return;
            width += 400 - inner;
          }
          throw new Error(`the panel is ${await web.locator('body').evaluate(() => window.innerWidth)} px wide`);
        });
        await vscode.step('the gate and the decision are on screen, the changes below them', async () => {
          await expectText(web.locator('#merge-reason'), `Required check "${CHECK_NAME}" is pending.`);
          // (No named helper inside: the page has no __name, which tsx adds to named functions.)
          const box = await web.locator('body').evaluate(() => ({
            height: window.innerHeight,
            scrollY: window.scrollY,
            send: document.querySelector('#send-review')!.getBoundingClientRect().bottom,
            radios: document.querySelector('#decision-approve')!.getBoundingClientRect().top,
            gate: document.querySelector('#merge-reason')!.getBoundingClientRect().bottom,
            changes: document.querySelector('#changes')!.getBoundingClientRect().top,
          }));
          if (box.scrollY !== 0) throw new Error(`the page is scrolled: ${box.scrollY}`);
          if (!(box.send <= box.height && box.gate <= box.height))
            throw new Error(`not visible without scrolling: ${JSON.stringify(box)}`);
          if (!(box.gate < box.radios && box.send < box.changes))
            throw new Error(`order on screen: ${JSON.stringify(box)}`);
          const checked = await web.locator('input[name=decision]:checked').count();
          assertEqual(checked, 0, 'decisions preselected');
        });
        await screenshot('overview-400px');
        await vscode.step('Tab reaches the decision before the changes', async () => {
          await web.locator('#cr-title').click();
          const order: string[] = [];
          for (let i = 0; i < 30 && !order.includes(`toggle-${sw1}`); i++) {
            await page.keyboard.press('Tab');
            order.push(
              await web
                .locator('body')
                .evaluate(() => document.activeElement?.id || document.activeElement?.textContent?.trim() || ''),
            );
          }
          const at = (id: string) => order.indexOf(id);
          if (!(
            at('action-refresh') >= 0 &&
            at('action-refresh') < at('decision-approve') &&
            at('decision-approve') < at('send-review') &&
            at('send-review') < at('changes-filter') &&
            at('changes-filter') < at(`toggle-${sw1}`)
          )) {
            throw new Error(`focus order: ${order.join(' > ')}`);
          }
        });
      } finally {
        if (before) await page.setViewportSize(before);
        if (!(await page.locator('.part.sidebar').isVisible()))
          await vscode.runCommand('View: Toggle Primary Side Bar Visibility').catch(() => {});
      }
    },
  },
  {
    name: "review page: Open in Diff Editor hands the change to the editor's diff command",
    async run({ vscode }) {
      const web = await openPanel(vscode);
      const { sw1 } = w().changes;
      await vscode.clearNotifications();
      await web.locator(`#change-${sw1} [data-act=open-diff]`).click();
      // The panel runs changeControl.openChangeDiff(request, change): a diff editor of sw1 opens,
      // or, where the command is missing, the panel says so (never silence).
      await vscode.step('a diff editor of sw1, or the reason it could not open', async () => {
        const deadline = Date.now() + 20_000;
        while (Date.now() < deadline) {
          if (
            await vscode
              .tab(/sw1/)
              .isVisible()
              .catch(() => false)
          )
            return;
          const toast = vscode.page.locator('.notifications-toasts .notification-list-item', {
            hasText: 'Opening the change in the diff editor failed',
          });
          if (await toast.isVisible().catch(() => false)) {
            await expectText(toast, 'changeControl.openChangeDiff');
            return;
          }
          await vscode.page.waitForTimeout(250);
        }
        throw new Error('neither a diff editor nor a failure message');
      });
    },
  },
  {
    name: 'comments: a comment from the webview is anchored to its change through the API, and a reply lands in its thread',
    async run({ vscode, screenshot }) {
      const web = await openPanel(vscode);
      const sw1 = w().changes.sw1;
      const text = 'Why R2 and not R3? R3 is where main puts it.';
      await vscode.step('comment on sw1', async () => {
        await web.locator(`#comment-on-${sw1}`).click();
        await web.locator(`#ta-comment-${sw1}`).fill(text);
        await web.locator(`#send-comment-${sw1}`).click();
        await expectText(web.locator(`#change-${sw1} .thread .comment.root`), text);
      });
      const [root] = await seeded.comments();
      assertEqual(
        {
          change_request: root?.change_request,
          change_diff: root?.change_diff,
          parent: root?.parent,
          author: root?.author.username,
          text: root?.text,
        },
        { change_request: w().changeRequest.id, change_diff: sw1, parent: null, author: 'bob', text },
        'the comment through the API',
      );

      const reply = 'Checked with the DC team: R2 has the free ports.';
      await vscode.step('reply in the thread', async () => {
        const thread = web.locator(`#change-${sw1} .thread[data-thread-id="${root.id}"]`);
        await thread.locator('button', { hasText: 'Reply' }).click();
        await web.locator(`#ta-reply-${root.id}`).fill(reply);
        await web.locator(`#send-reply-${root.id}`).click();
        await expectText(thread.locator('.comment.reply'), reply);
      });
      const comments = await seeded.comments();
      assertEqual(comments.length, 2, 'comments through the API');
      const answer = comments.find((c) => c.id !== root.id);
      assertEqual(
        { parent: answer.parent, change_diff: answer.change_diff, author: answer.author.username, text: answer.text },
        { parent: root.id, change_diff: sw1, author: 'bob', text: reply },
        'the reply through the API',
      );
      await web.locator(`#change-${sw1} .threads`).scrollIntoViewIfNeeded();
      await screenshot('thread');
    },
  },
  {
    name: 'review page: a comment made elsewhere appears on refresh, and the review being typed stays',
    async run({ vscode, screenshot }) {
      const web = await openPanel(vscode);
      const { sw2 } = w().changes;
      const draft = 'Half-written: the rack move looks right, but';
      await web.locator('#ta-review').fill(draft);
      const text = 'Author here: sw2 goes in at the same time.';
      const posted = await w()
        .svc.as(w().author.token)
        .post(API.comments, { change_request: w().changeRequest.id, change_diff: sw2, text });
      if (posted.status !== 201) throw new Error(`POST comment: ${posted.status} ${JSON.stringify(posted.body)}`);
      await web.locator('#action-refresh').click();
      await vscode.step('the new comment shows at sw2, the draft is still there', async () => {
        await expectText(web.locator(`#change-${sw2} .thread .comment.root`), text);
        assertEqual(await web.locator('#ta-review').inputValue(), draft, 'the review draft');
        await expectText(web.locator('#timeline'), 'alice commented on');
      });
      await web.locator('#ta-review').fill('');
      await screenshot('refreshed');
    },
  },
  {
    name: 'review: an approval from the webview moves the request to approved',
    async run({ vscode, screenshot }) {
      const web = await openPanel(vscode);
      await vscode.step('approve in the review form', async () => {
        await web.locator('#decision-approve').check();
        await web.locator('#ta-review').fill('Rack R2 has room and power; approved.');
        await expectText(web.locator('#send-review'), 'Submit: Approve');
        await web.locator('#send-review').click();
        await expectText(web.locator('#cr-status'), 'Approved');
      });
      const cr = await apiRequest();
      assertEqual(
        { status: cr.status, approved: cr.approved, ready: cr.ready_to_merge },
        { status: 'approved', approved: true, ready: false },
        'the request through the API',
      );
      await vscode.step('the panel shows the approval and the remaining gate', async () => {
        await expectText(web.locator('#approval .rule .rule-head'), 'Network team 1 of 1 approval');
        await expectText(web.locator('#approval .rule'), 'Approved by: bob');
        await expectText(web.locator('#approval-state'), 'The policies are satisfied.');
        await expectText(web.locator('#merge-reason'), `Required check "${CHECK_NAME}" is pending.`);
        await expectText(web.locator('#timeline .event-review'), 'bob approved');
        await web.locator('#cr-title').scrollIntoViewIfNeeded();
      });
      await vscode.step('the tree: no longer waiting for my review; blocked, approved', async () => {
        await vscode.treeChildren(VIEW, 'Needs my review', (c) => c.length === 0);
        const blocked = await vscode.treeChildren(VIEW, 'Blocked', (c) =>
          c.some((r) => r.label === TITLE && r.description.includes('Approved')),
        );
        assertEqual(
          blocked.map((r) => r.label),
          [TITLE],
          'Blocked',
        );
      });
      await screenshot('approved');
    },
  },
  {
    name: 'palette: as the author, Merge Branch is refused with the reason while ci/build is pending',
    async run({ vscode, screenshot }) {
      await vscode.openActivity('Change Control');
      await vscode.runCommand('Change Control: Sign Out');
      await vscode.expectNotification('Signed out of Change Control.');
      await vscode.clearNotifications();
      await seeded.signIn(vscode, w().author.token, 'alice');
      await vscode.treeChildren(VIEW, 'Mine', (c) => c.some((r) => r.label === TITLE));
      await vscode.clearNotifications();

      await vscode.runCommand('Change Control: Merge Branch');
      await vscode.step('the QuickPick says why it is blocked', async () => {
        await vscode.expectQuickPick(TITLE);
        const row = vscode.page
          .locator('.quick-input-widget .quick-input-list .monaco-list-row', { hasText: TITLE })
          .first();
        await expectText(row, `Blocked: Required check "${CHECK_NAME}" is pending.`);
      });
      await screenshot('merge-pick');
      await vscode.quickPick(TITLE);
      await vscode.expectNotification(`Cannot merge "${TITLE}": Required check "${CHECK_NAME}" is pending.`);
      await screenshot('merge-refused');
      assertEqual(await apiBranchStatus(), 'ready', 'the branch through the API');
      assertEqual((await apiRequest()).status, 'approved', 'the request through the API');

      await vscode.step('the panel: Merge Branch disabled, with the reason', async () => {
        await vscode.clearNotifications();
        const web = await openPanel(vscode);
        const merge = web.locator('#action-merge');
        await expectText(merge, 'Merge Branch');
        assertEqual(await merge.getAttribute('aria-disabled'), 'true', 'Merge Branch aria-disabled');
        await expectText(web.locator('#merge-reason'), `Required check "${CHECK_NAME}" is pending.`);
      });
    },
  },
  {
    name: 'palette: Return to Draft (QuickPick, modal confirmation) and Submit for Review',
    async run({ vscode, screenshot }) {
      await vscode.openActivity('Change Control');
      await vscode.runCommand('Change Control: Return to Draft');
      await vscode.quickPick(TITLE);
      await vscode.expectDialog(`Return "${TITLE}" to draft?`);
      await expectText(vscode.page.locator('.monaco-dialog-box .dialog-message-detail'), 'closes the merge gate');
      await screenshot('return-to-draft-dialog');
      await vscode.dialogButton('Return to Draft');
      await vscode.expectNotification(`"${TITLE}" returned to draft (now Draft).`);
      assertEqual((await apiRequest()).status, 'draft', 'after Return to Draft, through the API');
      await vscode.treeChildren(VIEW, 'Drafts', (c) => c.some((r) => r.label === TITLE));

      await vscode.runCommand('Change Control: Submit for Review');
      await vscode.step('both drafts are offered', async () => {
        await vscode.expectQuickPick(TITLE);
        await vscode.page.locator('.quick-input-widget .quick-input-list .monaco-list-row').nth(1).waitFor();
        const labels = (await vscode.quickPickLabels()).sort();
        assertEqual(labels, [w().draft.title, TITLE].sort(), 'Submit for Review candidates');
      });
      await vscode.quickPick(TITLE);
      // The reviews are kept: bob's approval still counts, so it comes back approved.
      await vscode.expectNotification(`"${TITLE}" submitted for review (now Approved).`);
      assertEqual((await apiRequest()).status, 'approved', 'after Submit, through the API');
      await vscode.treeChildren(VIEW, 'Blocked', (c) => c.some((r) => r.label === TITLE));
    },
  },
  {
    name: 'merge: after the pipeline reports ci/build passed through the API, Merge Branch from the palette completes the request',
    async run({ vscode, screenshot }) {
      await reportCheck(w(), 'success', 'build #1042 passed');
      await vscode.openActivity('Change Control');
      await vscode.runCommand('Change Control: Merge Branch');
      await vscode.step('the request is offered without a blocked reason', async () => {
        await vscode.expectQuickPick(TITLE);
        const row = vscode.page
          .locator('.quick-input-widget .quick-input-list .monaco-list-row', { hasText: TITLE })
          .first();
        await row.waitFor();
        const text = await row.innerText();
        if (/Blocked/.test(text)) throw new Error(`still shown as blocked: ${text}`);
      });
      await vscode.quickPick(TITLE);
      await vscode.step('merging asks first, saying what it overwrites on main (the rack conflict)', async () => {
        await vscode.expectDialog(`Merge "${TITLE}"? It overwrites main's changes to 1 object.`);
        await expectText(
          vscode.page.locator('.monaco-dialog-box .dialog-message-detail'),
          "sw1 (dcim.device) · rack: main now R3 → the branch's R2",
        );
        await screenshot('merge-confirm');
        await vscode.dialogButton("Overwrite Main's Value and Merge");
      });
      await vscode.expectNotification(`Branch ${BRANCH} merged.`, 30_000);
      const cr = await apiRequest();
      assertEqual(cr.status, 'completed', 'the request through the API');
      assertEqual(await apiBranchStatus(), 'merged', 'the branch through the API');

      await vscode.step('Recently closed lists it, completed', async () => {
        // The group starts collapsed; it has a twistie once it holds something.
        const closed = vscode.treeItem('Recently closed', { view: VIEW });
        await closed.and(vscode.page.locator('[aria-expanded]')).waitFor();
        if ((await closed.getAttribute('aria-expanded')) === 'false') await closed.click();
        const rows = await vscode.treeChildren(VIEW, 'Recently closed', (c) => c.some((r) => r.label === TITLE));
        const row = rows.find((r) => r.label === TITLE)!;
        if (!row.description.includes('Completed')) throw new Error(`row description: ${row.description}`);
        await vscode.treeChildren(VIEW, 'Blocked', (c) => !c.some((r) => r.label === TITLE));
      });
      await vscode.clearNotifications();
      const web = await openPanel(vscode);
      await expectText(web.locator('#cr-status'), 'Completed');
      await expectText(web.locator('#merge-state'), 'Merged.');
      await expectText(web.locator(`#checks li[data-check="${CHECK_NAME}"]`), 'Passed · required');
      await screenshot('completed');
    },
  },
  {
    name: 'change request panel: restored after a window reload (serializer)',
    timeoutMs: 240_000,
    async run({ vscode, screenshot }) {
      await vscode.runCommand('Change Control: Open Change Request');
      await vscode.quickPick(TITLE);
      const web = await vscode.webview({ has: '#cr-title', timeout: 30_000 });
      await expectText(web.locator('#cr-status'), 'Completed');
      await vscode.tab(TITLE).waitFor();
      await vscode.reloadWindow();
      await vscode.step('the panel comes back with its request', async () => {
        await vscode.tab(TITLE).waitFor({ timeout: TIMEOUTS.workbench });
        const web = await vscode.webview({ has: '#cr-title', timeout: 60_000 });
        await expectText(web.locator('#cr-title'), TITLE, 60_000);
        await expectText(web.locator('#cr-status'), 'Completed', 30_000);
        await web.locator(`#change-${w().changes.sw1}`).waitFor();
      });
      await screenshot('restored');
    },
  },
];
