// What an author does with a branch that has no change request yet, from the command palette:
// preview the policies that would govern it (a Markdown document), then open a change request
// for it (QuickPick of branches, title and reference asked in input boxes, the review page opens).
// Set up through the API on the seeded world (test/extension/seed.ts); seen as alice, the author.
import { assertEqual, expectText, TIMEOUTS } from '../harness';
import { ok, SeededWorld } from '../fixtures/seeded-world';
import type { Scenario } from '../suite';
import { API, POLICY_NAME } from '../../extension/seed';

const BRANCH = 'add-patch-panel';
const TITLE = 'Add the patch panel in R7';
const REF = 'CHG-2001';

const seeded = new SeededWorld();
const w = () => seeded.get();

export const scenarios: Scenario[] = [
  {
    name: 'palette: Preview Policies for Branch, then Open Change Request for Branch on a branch without a request',
    prepare: async (prep) => {
      await seeded.prepare(prep);
      const author = w().author.client;
      const branch = await ok(author.post(API.branches, { name: BRANCH }), 'create the branch');
      await ok(
        author.inBranch(branch.schema_id).post(API.devices, { name: 'pp-r7', status: 'planned', rack: 'R7' }),
        'a device in the branch',
      );
    },
    async run({ vscode, screenshot }) {
      await vscode.openActivity('Change Control');
      await vscode.updateMachineSettings({ 'changeControl.serverUrl': w().svc.url });
      await seeded.signIn(vscode, w().author.token, 'alice');

      await vscode.runCommand('Change Control: Preview Policies for Branch');
      await vscode.step('the branch is offered as having no change request yet', async () => {
        await vscode.expectQuickPick(BRANCH);
        const row = vscode.page
          .locator('.quick-input-widget .quick-input-list .monaco-list-row', { hasText: BRANCH })
          .first();
        await expectText(row, /No change request yet/);
      });
      await vscode.quickPick(BRANCH);
      await vscode.step(
        'a rendered Markdown preview names the branch and the policy that would govern it',
        async () => {
          const web = await vscode.webview({ has: '.markdown-body h1', timeout: 30_000 });
          await expectText(web.locator('.markdown-body h1'), `Preview: branch ${BRANCH}`, TIMEOUTS.ui);
          await expectText(web.locator('.markdown-body h3').first(), POLICY_NAME, TIMEOUTS.ui);
        },
      );
      await vscode.step('its tab is named for the branch, never dirty', async () => {
        const tab = vscode.page.locator('.tabs-container .tab.active');
        await expectText(tab, new RegExp(`Preview Policies for ${BRANCH}\\s*\\.md`));
        if (await tab.evaluate((el) => el.classList.contains('dirty'))) throw new Error('the preview tab is dirty');
      });
      await screenshot('preview-branch');
      await vscode.closeAllEditors();

      await vscode.runCommand('Change Control: Open Change Request for Branch');
      await vscode.quickPick(BRANCH);
      await vscode.inputBox(TITLE, { expectPrompt: 'Title' });
      await vscode.inputBox(REF, { expectPrompt: /External reference/ });
      await vscode.expectNotification(`Change request "${TITLE}" opened as a draft.`);
      const web = await vscode.webview({ has: '#cr-title', timeout: 30_000 });
      await expectText(web.locator('#cr-title'), TITLE);
      await screenshot('opened-for-branch');

      await vscode.step(
        'the service has the draft, on that branch, with its reference, requested by alice',
        async () => {
          const list = await ok(
            w().svc.admin.get(`${API.changeRequests}?q=${encodeURIComponent(TITLE)}`),
            'list requests',
          );
          const cr = list.results.find((r: any) => r.title === TITLE);
          if (!cr) throw new Error(`no request titled ${TITLE}`);
          assertEqual(
            [cr.status, cr.branch_name, cr.ref, cr.requester?.id ?? cr.requester],
            ['draft', BRANCH, REF, w().author.id],
            'the new request',
          );
        },
      );
    },
  },
];
