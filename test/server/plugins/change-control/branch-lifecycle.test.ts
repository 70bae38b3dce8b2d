import assert from 'node:assert/strict';
import { suiteService } from '../../../support/service';
import {
  act,
  BRANCHES,
  changesOf,
  CHECKS,
  checkNamed,
  checksOf,
  COMMENTS,
  created,
  detail,
  expectStatus,
  grant,
  ok,
  openRequest,
  REQUESTS,
  REVIEWS,
  branch,
} from './fixtures';
import { gateCast, mergeBranch, scenario } from './gate-support';
import { forSuite } from '../../../support/prepared';

describe('change control: the branch lifecycle as the request sees it', () => {
  const svc = suiteService({ config: { change_control: { required_external_checks: [['ci/build', 'CI build']] } } });
  const cast = forSuite(() => gateCast(svc));
  before(async () => {
    await grant(
      svc,
      { users: [cast.author.id] },
      { object_types: ['change_control.changerequest'], actions: ['abandon', 'reopen'] },
    );
  });

  it('ChangeRequest branch_name: renaming the branch updates it (list filter and search follow); the title stays', async () => {
    const s = await scenario(cast, 'old-name', { upTo: 'needs-review' });
    assert.equal(s.cr.branch_name, 'old-name');
    assert.equal(s.cr.title, 'old-name');
    await ok(cast.author.client.patch(`${BRANCHES}${s.branch.id}/`, { name: 'new-name' }));
    const cr = await detail(cast.author.client, s.cr.id);
    assert.equal(cr.branch_name, 'new-name');
    assert.equal(cr.branch, s.branch.id);
    assert.equal(cr.branch_deleted, false);
    assert.equal(cr.title, 'old-name', "the title is the request's own field");
    assert.equal(cr.status, 'needs-review', 'a rename moves nothing');
    const listed = await ok(cast.author.client.get(`${REQUESTS}?branch_name=new-name`));
    assert.deepEqual(
      listed.results.map((r: { id: number }) => r.id),
      [s.cr.id],
    );
    const hits = (await ok(cast.author.client.get('/api/search/?q=new-name'))).results;
    assert.ok(hits.some((h: { id: number; field: string }) => h.id === s.cr.id && h.field === 'branch_name'));
  });

  it('ChangeRequest branch_deleted: deleting the branch keeps the request as history with its branch_name, reviews, threads and check results', async () => {
    const s = await scenario(cast, 'doomed', { upTo: 'approved' });
    await ok(cast.author.client.patch(`${BRANCHES}${s.branch.id}/`, { name: 'doomed-renamed' }));
    const [change] = await changesOf(svc, s.branch.id);
    const thread = await created(
      cast.reviewer.client.post(COMMENTS, {
        change_request: s.cr.id,
        change_diff: change.id,
        text: 'Is the name final?',
      }),
    );
    const ci = await checkNamed(svc.admin, s.cr.id, 'ci/build');
    await ok(
      svc.admin.patch(`${CHECKS}${ci.id}/`, {
        status: 'success',
        summary: 'build 17 green',
        details_url: 'https://ci.example/17',
      }),
    );
    const reviewsBefore = (await ok(svc.admin.get(`${REVIEWS}?change_request_id=${s.cr.id}`))).results;
    assert.equal(reviewsBefore.length, 1);

    expectStatus(await cast.author.client.delete(`${BRANCHES}${s.branch.id}/`), 204);
    expectStatus(await svc.admin.get(`${BRANCHES}${s.branch.id}/`), 404);

    const cr = await detail(cast.author.client, s.cr.id);
    assert.equal(cr.branch_deleted, true);
    assert.equal(cr.branch, null);
    assert.equal(cr.branch_name, 'doomed-renamed', 'the last name is kept');
    assert.equal(cr.ready_to_merge, false);
    assert.equal(cr.has_conflicts, false);

    const reviews = (await ok(svc.admin.get(`${REVIEWS}?change_request_id=${s.cr.id}`))).results;
    assert.deepEqual(
      reviews.map((r: { id: number; decision: string }) => [r.id, r.decision]),
      reviewsBefore.map((r: { id: number; decision: string }) => [r.id, r.decision]),
    );
    const comments = (await ok(svc.admin.get(`${COMMENTS}?change_request_id=${s.cr.id}`))).results;
    assert.deepEqual(
      comments.map((c: { id: number; text: string }) => [c.id, c.text]),
      [[thread.id, 'Is the name final?']],
    );
    assert.equal(comments[0].change_label, thread.change_label, "the anchor's label survives");
    const kept = (await checksOf(svc.admin, s.cr.id)).find((c) => c.name === 'ci/build');
    assert.equal(kept.status, 'success');
    assert.equal(kept.summary, 'build 17 green');
    assert.equal(kept.details_url, 'https://ci.example/17');

    // History only: it cannot be submitted again, but it can be abandoned.
    expectStatus(await act(cast.author.client, s.cr.id, 'return-to-draft'), 200);
    const resubmit = await act(cast.author.client, s.cr.id, 'submit');
    expectStatus(resubmit, 409);
    assert.match(resubmit.body.detail, /branch of this change request has been deleted/);
    assert.equal((await ok(act(cast.author.client, s.cr.id, 'abandon'))).status, 'abandoned');
    const found = await ok(cast.author.client.get(`${REQUESTS}?branch_name=doomed-renamed`));
    assert.deepEqual(
      found.results.map((r: { id: number }) => r.id),
      [s.cr.id],
    );
  });

  it('ChangeRequest branch_deleted: a completed request whose merged branch is deleted stays completed', async () => {
    const s = await scenario(cast, 'merged-then-deleted', { upTo: 'approved' });
    const ci = await checkNamed(svc.admin, s.cr.id, 'ci/build');
    await ok(svc.admin.patch(`${CHECKS}${ci.id}/`, { status: 'success' }));
    await ok(mergeBranch(cast.author.client, s.branch.id));
    expectStatus(await cast.author.client.delete(`${BRANCHES}${s.branch.id}/`), 204);
    const cr = await detail(cast.author.client, s.cr.id);
    assert.equal(cr.status, 'completed');
    assert.equal(cr.branch_deleted, true);
    assert.equal(cr.branch_name, 'merged-then-deleted');
    assert.equal((await checkNamed(svc.admin, s.cr.id, 'ci/build')).status, 'success');
  });

  it('ChangeRequest branch: a new branch with the old name gets its own request; the old one stays history', async () => {
    const s = await scenario(cast, 'reused', { upTo: 'draft' });
    expectStatus(await cast.author.client.delete(`${BRANCHES}${s.branch.id}/`), 204);
    const again = await branch(cast.author.client, 'reused');
    const second = await openRequest(cast.author.client, again.branch.id);
    assert.notEqual(second.id, s.cr.id);
    const both = await ok(cast.author.client.get(`${REQUESTS}?branch_name=reused&ordering=id`));
    assert.deepEqual(
      both.results.map((r: { id: number; branch_deleted: boolean }) => [r.id, r.branch_deleted]),
      [
        [s.cr.id, true],
        [second.id, false],
      ],
    );
  });
});
