// The result of an action is announced and focus lands on the new state: bob reviews by keyboard
// alone on the review page (Space on Approve, Tab to the comment, Ctrl+Enter sends); the page's
// live region (role status, polite) then says "You approved …", and focus is on his review, not
// the page's body. On the seeded world (test/extension/seed.ts).
import { expectText, TIMEOUTS } from '../harness';
import { ok, SeededWorld } from '../fixtures/seeded-world';
import type { Scenario } from '../suite';
import { API } from '../../extension/seed';

const VIEW = 'Change Requests';
const TITLE = 'Move sw1 to rack R2';

const seeded = new SeededWorld();
const w = () => seeded.get();

export const scenarios: Scenario[] = [
  {
    name: 'review announced: a review sent by keyboard is said in the live region and focus lands on it',
    prepare: (prep) => seeded.prepare(prep),
    async run({ vscode, screenshot }) {
      const world = w();
      await vscode.openActivity('Change Control');
      await vscode.updateMachineSettings({ 'changeControl.serverUrl': world.svc.url });
      await seeded.signIn(vscode, world.reviewer.token, 'bob');
      await vscode.clearNotifications();

      await vscode.treeChildren(VIEW, 'Needs my review', (c) => c.some((r) => r.label === TITLE));
      await vscode.clickTreeItem(TITLE, { view: VIEW });
      const web = await vscode.webview({ has: '#review-form', timeout: 30_000 });
      await expectText(web.locator('#cr-title'), TITLE);

      await vscode.step('by keyboard: Space on Approve, Tab to the comment, type, Ctrl+Enter', async () => {
        const approve = web.locator('#review-form input[name="decision"][value="approve"]');
        await approve.focus();
        await vscode.page.keyboard.press('Space');
        if (!(await approve.isChecked())) throw new Error('Space did not choose Approve');
        const comment = web.locator('#review-form textarea');
        await comment.focus();
        await vscode.page.keyboard.type('Rack R2 has power and space.');
        await vscode.page.keyboard.press('Control+Enter');
      });
      await vscode.step('the live region says the result', async () => {
        const region = web.locator('#announcer');
        await expectText(web.locator('#my-review'), /^You approved/, TIMEOUTS.ui);
        const deadline = Date.now() + TIMEOUTS.ui;
        for (;;) {
          const said = ((await region.textContent()) ?? '').trim();
          if (/^You approved/.test(said)) break;
          if (Date.now() > deadline) throw new Error(`the live region says: ${JSON.stringify(said)}`);
          await new Promise((r) => setTimeout(r, 200));
        }
        if ((await region.getAttribute('aria-live')) !== 'polite' || (await region.getAttribute('role')) !== 'status')
          throw new Error('the announcer is not a polite status region');
      });
      await vscode.step('focus is on the review, not the body', async () => {
        const focused = await web
          .locator('#my-review')
          .evaluate((el) => el === el.ownerDocument.activeElement)
          .catch(() => false);
        if (!focused) {
          const where = await web.locator('body').evaluate((b) => {
            const a = b.ownerDocument.activeElement;
            return a ? `${a.tagName}#${a.id}` : 'nothing';
          });
          throw new Error(`focus is on ${where}`);
        }
      });
      await vscode.step('the trees follow: no longer waiting for bob, under Reviewed by me', async () => {
        await vscode.treeChildren(VIEW, 'Needs my review', (c) => !c.some((r) => r.label === TITLE));
        await vscode.treeChildren('My Reviews', 'Reviewed by me', (c) => c.some((r) => r.label === TITLE));
      });
      await screenshot('review-announced');

      const reviews = await ok(
        world.svc.admin.get(`${API.reviews}?change_request_id=${world.changeRequest.id}`),
        'the reviews',
      );
      if (!reviews.results.some((r: any) => r.reviewer.username === 'bob' && r.decision === 'approve'))
        throw new Error(`reviews: ${JSON.stringify(reviews.results)}`);
    },
  },
];
