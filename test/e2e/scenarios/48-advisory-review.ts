// A reviewer named only by a policy on trial (`enforcement: evaluate`) is told that their review
// is advisory: My Reviews lists the request under "Advisory reviews (policy on trial)", never
// under "Waiting for my review" (and Change Requests has nothing under Needs my review); the
// review page's form says the review is advisory and names the policy; the approvals section
// marks the policy on trial. Seen as dave, on the seeded world (test/extension/seed.ts).
import { expectText, TIMEOUTS } from '../harness';
import { settled } from '../fixtures/layout';
import { ok, SeededWorld } from '../fixtures/seeded-world';
import type { Scenario } from '../suite';
import { API, makeActor, REVIEWER_GRANTS, type Actor } from '../../extension/seed';

const VIEW = 'Change Requests';
const REVIEWS = 'My Reviews';
const ADVISORY = 'Advisory reviews (policy on trial)';
const WAITING = 'Waiting for my review';
const TRIAL = 'Edge routers (trial)';

const seeded = new SeededWorld();
const w = () => seeded.get();
let dave: Actor | undefined;

export const scenarios: Scenario[] = [
  {
    name: 'advisory review: a reviewer named only by a policy on trial finds the request under Advisory reviews, not Waiting for my review, and the page says the review is advisory',
    prepare: async (prep) => {
      await seeded.prepare(prep);
      const world = w();
      dave = await makeActor(world.svc, 'dave', REVIEWER_GRANTS);
      const trial = await ok(
        world.svc.admin.post(API.policies, {
          name: TRIAL,
          object_types: ['dcim.device'],
          enforcement: 'evaluate',
        }),
        'the policy on trial',
      );
      await ok(
        world.svc.admin.post(API.rules, { policy: trial.id, name: 'Edge team', min_reviews: 1, users: [dave.id] }),
        "the trial's rule naming dave",
      );
      // Submitted once the policy exists: both policies govern it, the trial one alone names dave.
      await ok(world.author.client.post(`${API.changeRequests}${world.draft.id}/submit/`, {}), 'submit the draft');
    },
    async run({ vscode, screenshot }) {
      const world = w();
      const title = world.draft.title;
      await vscode.openActivity('Change Control');
      await vscode.updateMachineSettings({ 'changeControl.serverUrl': world.svc.url });
      await seeded.signIn(vscode, dave!.token, 'dave');

      await vscode.expandView(REVIEWS);
      await vscode.step(`My Reviews lists it under "${ADVISORY}", and nothing waits for dave's review`, async () => {
        await vscode.treeChildren(REVIEWS, ADVISORY, (c) => c.some((r) => r.label === title), TIMEOUTS.ui);
        const waiting = await vscode.treeChildren(REVIEWS, WAITING);
        if (waiting.some((r) => r.label === title)) throw new Error(`under ${WAITING}: ${JSON.stringify(waiting)}`);
        const needs = await vscode.treeChildren(VIEW, 'Needs my review');
        if (needs.some((r) => r.label === title)) throw new Error(`under Needs my review: ${JSON.stringify(needs)}`);
      });

      await vscode.clickTreeItem(title, { view: REVIEWS });
      const web = await vscode.webview({ has: '#cr-title', timeout: 30_000 });
      await expectText(web.locator('#cr-title'), title);
      await vscode.step('the review form says the review is advisory and names the policy on trial', async () => {
        await expectText(
          web.locator('#review-advisory'),
          `Your review is advisory: only the policy on trial "${TRIAL}" names you, so it counts for no decision.`,
        );
        await expectText(web.locator('#review-form-title'), /advisory/);
      });
      await web.locator('#review-advisory').scrollIntoViewIfNeeded();
      await settled(vscode, { clearNotifications: true });
      await screenshot('advisory-reviews');

      // The service agrees: advisory_reviewer=me lists it, reviewer=me does not.
      const advisory = await ok(dave!.client.get(`${API.changeRequests}?advisory_reviewer=me`), 'advisory_reviewer=me');
      const binding = await ok(dave!.client.get(`${API.changeRequests}?reviewer=me`), 'reviewer=me');
      if (!advisory.results.some((r: any) => r.id === world.draft.id) || binding.results.length !== 0)
        throw new Error(
          `advisory ${JSON.stringify(advisory.results.map((r: any) => r.id))}, binding ${JSON.stringify(binding.results.map((r: any) => r.id))}`,
        );
    },
  },
  {
    name: "advisory review: dave's approval shows on the open page's timeline as advisory, and under Reviewed by me; it approves nothing",
    async run({ vscode }) {
      const world = w();
      await vscode.openActivity('Change Control');
      await vscode.clickTreeItem(world.draft.title, { view: REVIEWS });
      const web = await vscode.webview({ has: '#cr-title', timeout: 30_000 });
      await expectText(web.locator('#cr-title'), world.draft.title);
      await ok(
        dave!.client.post(API.reviews, { change_request: world.draft.id, decision: 'approve', comment: 'Looks fine.' }),
        "dave's advisory approval",
      );
      await vscode.step('the timeline marks the review advisory (policy on trial)', async () => {
        const entry = web.locator('.event.advisory').first();
        await entry.waitFor({ timeout: TIMEOUTS.ui });
        await expectText(entry, /advisory \(policy on trial\)/);
      });
      await vscode.step('Reviewed by me says advisory', async () => {
        await vscode.treeChildren(REVIEWS, 'Reviewed by me', (c) => c.some((r) => /advisory/.test(r.description)));
      });
      const cr = await ok(world.svc.admin.get(`${API.changeRequests}${world.draft.id}/`), 'the request');
      if (cr.status === 'approved') throw new Error('an advisory review approved the request');
    },
  },
];
