// A change request worked from review to merge in the packaged extension, against a service this
// file starts and seeds (test/extension/seed.ts): users alice (author), bob (reviewer) and ci (a
// pipeline); a policy whose rule names bob and which requires the reported check ci/build; the
// branch move-sw1 (sw1 moved to rack R2, conflicting with main, which moved it to R3; sw2 added)
// with its request "Move sw1 to rack R2", submitted; and a draft request of alice.
//
// Every step is done through the UI, then checked through the API. The scenarios run in order
// and build on each other (the reviewer's part, then the author's).
import { assertEqual, expectText, TIMEOUTS, type VSCode } from '../harness';
import { projectExtensionVsix } from '../fixtures/project-extension';
import type { Scenario } from '../suite';
import { startService, type TestService } from '../../support/service';
import { API, CHECK_NAME, reportCheck, seedWorld, type World } from '../../extension/seed';

const VIEW = 'Change Requests';
const TITLE = 'Move sw1 to rack R2';
const BRANCH = 'move-sw1';

let svc: TestService | undefined;
let world: World | undefined;

function w(): World {
  if (!world) throw new Error('the scenario\'s service is not running (its prepare failed)');
  return world;
}

function host(): string {
  return new URL(w().svc.url).host;
}

/** The request as the service has it now (admin's view). */
async function apiRequest(): Promise<any> {
  const res = await w().svc.admin.get(`${API.changeRequests}${w().changeRequest.id}/`);
  if (res.status !== 200) throw new Error(`GET change request: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

async function apiComments(): Promise<any[]> {
  const res = await w().svc.admin.get(`${API.comments}?change_request_id=${w().changeRequest.id}&ordering=id`);
  if (res.status !== 200) throw new Error(`GET comments: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.results;
}

async function apiBranchStatus(): Promise<string> {
  return (await w().svc.admin.get(`${API.branches}${w().branch.id}/`)).body.status;
}

/** The description VS Code shows next to a view's title (TreeView.description). */
function viewDescription(vscode: VSCode, title: string) {
  return vscode.view(title).locator('.pane-header .description').first();
}

/** Signs in to the seeded service with a token, from the palette. */
async function signIn(vscode: VSCode, token: string, username: string): Promise<void> {
  await vscode.runCommand('Change Control: Sign In');
  await vscode.quickPick(/Sign in with a token/);
  await vscode.inputBox(token, { expectPrompt: 'API token' });
  await vscode.expectNotification(`Signed in to ${host()} as ${username}.`, 30_000);
  await expectText(viewDescription(vscode, VIEW), `${username} · ${host()}`);
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
    async prepare(prep) {
      svc = await startService();
      prep.onCleanup(async () => {
        await svc?.close();
        svc = undefined;
        world = undefined;
      });
      world = await seedWorld(svc);
      prep.addExtension({ vsix: projectExtensionVsix(prep.tempDir) });
      // Only needed when the bundled service starts (this file alone, with no service URL set yet).
      prep.machineSetting('changeControl.nodePath', process.execPath);
    },
    async run({ vscode, screenshot }) {
      await vscode.openActivity('Change Control');
      await vscode.updateUserSettings({ 'changeControl.serverUrl': w().svc.url });
      await vscode.step('not signed in to the seeded service', () =>
        expectText(vscode.view(VIEW).locator('.welcome-view-content'), 'You are not connected', 30_000));
      await signIn(vscode, w().reviewer.token, 'bob');

      await vscode.step('Needs my review lists the request', async () => {
        const children = await vscode.treeChildren(VIEW, 'Needs my review', (c) => c.some((r) => r.label === TITLE));
        assertEqual(children.map((r) => r.label), [TITLE], 'Needs my review');
        const row = children[0];
        if (!/CHG-1042 · Needs review · High · conflicts/.test(row.description)) throw new Error(`row description: ${row.description}`);
      });
      await vscode.step('the other groups', async () => {
        const rows = await vscode.treeRows(VIEW);
        const groups = Object.fromEntries(rows.filter((r) => r.level === 1).map((r) => [r.label, r.description]));
        assertEqual(groups, { 'Needs my review': '1', Mine: '0', Drafts: '1', 'Ready to merge': '0', Blocked: '1', 'Recently closed': '0' }, 'group counts');
        assertEqual((await vscode.treeChildren(VIEW, 'Drafts')).map((r) => r.label), [w().draft.title], 'Drafts');
        assertEqual((await vscode.treeChildren(VIEW, 'Blocked')).map((r) => r.label), [TITLE], 'Blocked');
      });
      // The reviewer is told once, quietly, that the request waits for them.
      await vscode.expectNotification('Change request waiting for your review: CHG-1042: Move sw1 to rack R2');
      await screenshot('tree');
      // The API agrees: bob is the outstanding reviewer.
      const listed = await w().svc.as(w().reviewer.token).get(`${API.changeRequests}?reviewer=me`);
      assertEqual(listed.body.results.map((r: any) => r.id), [w().changeRequest.id], 'reviewer=me through the API');
    },
  },
  {
    name: 'change request panel: the branch\'s changes (before/after, a conflict marked), the approval panel, the checks',
    async run({ vscode, screenshot }) {
      const web = await openPanel(vscode);
      const { sw1, sw2 } = w().changes;
      await vscode.step('header', async () => {
        await expectText(web.locator('#cr-status'), 'Needs review');
        await expectText(web.locator('#cr-branch'), BRANCH);
        await expectText(web.locator('.cr-header .facts'), 'CHG-1042');
      });
      await vscode.step('sw1: rack R1 → R2 while main moved it to R3, marked as a conflict', async () => {
        const rack = web.locator(`#change-${sw1} tr[data-attr="rack"]`);
        await expectText(rack.locator('td.original'), 'R1');
        await expectText(rack.locator('td.modified'), 'R2');
        await expectText(rack.locator('td.current'), 'R3');
        await expectText(rack.locator('th'), 'conflict');
        if (!(await rack.getAttribute('class'))?.includes('conflict')) throw new Error('the rack row is not marked as a conflict');
        await expectText(web.locator(`#change-${sw1} .warning`), 'Conflicts with main: rack');
        const status = web.locator(`#change-${sw1} tr[data-attr="status"]`);
        await expectText(status.locator('td.original'), 'active');
        await expectText(status.locator('td.modified'), 'planned');
      });
      await vscode.step('sw2: created', async () => {
        await expectText(web.locator(`#change-${sw2} h3`), 'Created sw2');
        await expectText(web.locator(`#change-${sw2} tr[data-attr="rack"] td.modified`), 'R2');
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
      await vscode.step('the Checks view shows the request\'s checks', async () => {
        await vscode.expandView('Checks');
        await vscode.treeItem(CHECK_NAME, { view: 'Checks' }).waitFor();
        const [check] = await vscode.treeRows('Checks');
        assertEqual(check, { label: CHECK_NAME, description: 'Pending · required', level: 1, expanded: null }, 'Checks view');
      });
      await screenshot('webview');
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
      const [root] = await apiComments();
      assertEqual({ change_request: root?.change_request, change_diff: root?.change_diff, parent: root?.parent, author: root?.author.username, text: root?.text },
        { change_request: w().changeRequest.id, change_diff: sw1, parent: null, author: 'bob', text }, 'the comment through the API');

      const reply = 'Checked with the DC team: R2 has the free ports.';
      await vscode.step('reply in the thread', async () => {
        const thread = web.locator(`#change-${sw1} .thread[data-thread-id="${root.id}"]`);
        await thread.locator('button', { hasText: 'Reply' }).click();
        await web.locator(`#ta-reply-${root.id}`).fill(reply);
        await web.locator(`#send-reply-${root.id}`).click();
        await expectText(thread.locator('.comment.reply'), reply);
      });
      const comments = await apiComments();
      assertEqual(comments.length, 2, 'comments through the API');
      const answer = comments.find((c) => c.id !== root.id);
      assertEqual({ parent: answer.parent, change_diff: answer.change_diff, author: answer.author.username, text: answer.text },
        { parent: root.id, change_diff: sw1, author: 'bob', text: reply }, 'the reply through the API');
      await web.locator(`#change-${sw1} .threads`).scrollIntoViewIfNeeded();
      await screenshot('thread');
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
      assertEqual({ status: cr.status, approved: cr.approved, ready: cr.ready_to_merge }, { status: 'approved', approved: true, ready: false }, 'the request through the API');
      await vscode.step('the panel shows the approval and the remaining gate', async () => {
        await expectText(web.locator('#approval .rule .rule-head'), 'Network team 1 of 1 approval');
        await expectText(web.locator('#approval .rule'), 'Approved by: bob');
        await expectText(web.locator('#approval-state'), 'The policies are satisfied.');
        await expectText(web.locator('#merge-reason'), `Required check "${CHECK_NAME}" is pending.`);
        await expectText(web.locator('#reviews .review'), 'bob approved');
        await web.locator('#cr-title').scrollIntoViewIfNeeded();
      });
      await vscode.step('the tree: no longer waiting for my review; blocked, approved', async () => {
        await vscode.treeChildren(VIEW, 'Needs my review', (c) => c.length === 0);
        const blocked = await vscode.treeChildren(VIEW, 'Blocked', (c) => c.some((r) => r.label === TITLE && r.description.includes('Approved')));
        assertEqual(blocked.map((r) => r.label), [TITLE], 'Blocked');
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
      await signIn(vscode, w().author.token, 'alice');
      await vscode.treeChildren(VIEW, 'Mine', (c) => c.some((r) => r.label === TITLE));
      await vscode.clearNotifications();

      await vscode.runCommand('Change Control: Merge Branch');
      await vscode.step('the QuickPick says why it is blocked', async () => {
        const row = vscode.page.locator('.quick-input-widget .quick-input-list .monaco-list-row', { hasText: TITLE }).first();
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
        // The palette's own rows go first ("Submit for Review" and "Submit Review" both match).
        await vscode.page.locator('.quick-input-widget .quick-input-list .monaco-list-row', { hasText: TITLE }).first().waitFor();
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
        const row = vscode.page.locator('.quick-input-widget .quick-input-list .monaco-list-row', { hasText: TITLE }).first();
        await row.waitFor();
        const text = await row.innerText();
        if (/Blocked/.test(text)) throw new Error(`still shown as blocked: ${text}`);
      });
      await vscode.quickPick(TITLE);
      await vscode.step('merging asks first', async () => {
        await vscode.expectDialog(`Merge "${TITLE}"?`);
        await expectText(vscode.page.locator('.monaco-dialog-box .dialog-message-detail'), `Branch ${BRANCH} is merged into main`);
        await screenshot('merge-confirm');
        await vscode.dialogButton('Merge');
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
