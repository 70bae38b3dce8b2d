// Preview Policies for Branch opens a rendered page (Markdown's own preview, not its source): no
// escape is visible (a policy named "(trial)"), the freezes that would apply are listed (one in
// force, one ahead, a recurring one read as its rule), what would block names the freeze with
// its time as the reader reads times, and each check is named once. A branch of alice's with no
// change request yet, on the seeded world (test/extension/seed.ts), a policy on trial and three
// freezes.
import { expectText } from '../harness';
import { ok, SeededWorld } from '../fixtures/seeded-world';
import type { Scenario } from '../suite';
import { API, CHECK_NAME } from '../../extension/seed';

const BRANCH = 'add-core-router';
const TRIAL = 'Core routers (trial)';
const IN_FORCE = 'Quarter close';
const AHEAD = 'Datacenter move';
const RECURRING = 'Monday maintenance';

const seeded = new SeededWorld();
const w = () => seeded.get();

export const scenarios: Scenario[] = [
  {
    name: 'preview policies: a rendered page with no visible escapes, the freezes that would apply, and each check named once',
    prepare: async (prep) => {
      await seeded.prepare(prep);
      const world = w();
      await ok(
        world.svc.admin.post(API.policies, { name: TRIAL, object_types: ['dcim.device'], enforcement: 'evaluate' }),
        'the policy on trial',
      );
      const now = world.svc.clock.now().getTime();
      const hour = 3_600_000;
      await ok(
        world.svc.admin.post(API.freezes, {
          name: IN_FORCE,
          start: new Date(now - hour).toISOString(),
          end: new Date(now + 3 * hour).toISOString(),
        }),
        'a freeze in force',
      );
      await ok(
        world.svc.admin.post(API.freezes, {
          name: AHEAD,
          start: new Date(now + 48 * hour).toISOString(),
          end: new Date(now + 52 * hour).toISOString(),
        }),
        'a freeze ahead',
      );
      await ok(
        world.svc.admin.post(API.freezes, {
          name: RECURRING,
          kind: 'recurring',
          weekdays: [1],
          start_time: '08:00',
          end_time: '12:00',
          time_zone: 'America/New_York',
        }),
        'a recurring freeze (Mondays, New York time)',
      );
      const b = await ok(world.author.client.post(API.branches, { name: BRANCH }), 'the branch');
      await ok(
        world.author.client.inBranch(b.schema_id).post(API.devices, { name: 'core1', status: 'planned', rack: 'R9' }),
        'core1 in the branch',
      );
    },
    async run({ vscode, screenshot }) {
      const world = w();
      await vscode.openActivity('Change Control');
      await vscode.updateMachineSettings({ 'changeControl.serverUrl': world.svc.url });
      await seeded.signIn(vscode, world.author.token, 'alice');

      await vscode.runCommand('Change Control: Preview Policies for Branch');
      await vscode.quickPick(new RegExp(BRANCH));
      const web = await vscode.webview({ has: '.markdown-body h1', timeout: 30_000 });
      const body = web.locator('.markdown-body');
      await expectText(body.locator('h1'), `Preview: branch ${BRANCH}`);
      await expectText(vscode.page.locator('.tabs-container .tab.active'), `Preview Policies for ${BRANCH}.md`);
      await vscode.step('rendered: no Markdown escape or syntax shows', async () => {
        await expectText(body.locator('h3', { hasText: TRIAL }), `${TRIAL} (evaluating: never blocks)`);
        const text = (await body.textContent()) ?? '';
        if (/\\[()*_#[\]]|\*\*|^#/m.test(text)) throw new Error(`Markdown shows through: ${text}`);
      });
      await vscode.step('the freezes that would apply: the one in force and the one ahead, no ISO time', async () => {
        const freezes = body.locator('h2:has-text("Freezes that would apply") + ul li');
        await expectText(freezes.filter({ hasText: IN_FORCE }), new RegExp(`Frozen by "${IN_FORCE}" until `));
        await expectText(freezes.filter({ hasText: AHEAD }), new RegExp(`Freeze "${AHEAD}" from .* to `));
        // A recurring freeze reads as its rule, in its own zone, with its next occurrence in the reader's.
        await expectText(
          freezes.filter({ hasText: RECURRING }),
          new RegExp(`Freeze "${RECURRING}", every Monday 08:00–12:00 New York time; next from .* to `),
        );
        const text = (await body.textContent()) ?? '';
        if (/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/.test(text)) throw new Error(`an ISO time: ${text}`);
        await expectText(
          body.locator('h2:has-text("What would block") + ul'),
          new RegExp(`Merging is frozen by "${IN_FORCE}" until `),
        );
      });
      await vscode.step('each check is named once', async () => {
        const checks = body.locator('h2:has-text("Checks a request would need") + ul li');
        await expectText(checks.first(), new RegExp(`^${CHECK_NAME}: required; reported from outside`));
        const text = (await checks.first().textContent()) ?? '';
        if (text.split(CHECK_NAME).length !== 2) throw new Error(`the check named twice: ${text}`);
      });
      await vscode.clearNotifications();
      // The palette that cleared them has faded away.
      await vscode.page
        .locator('.quick-input-widget')
        .waitFor({ state: 'hidden', timeout: 5_000 })
        .catch(() => undefined);
      await screenshot('preview-policies');
    },
  },
];
