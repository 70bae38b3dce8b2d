import assert from 'node:assert/strict';
import { suiteService, type TestService } from '../../../support/service';
import { actor, detail, expectStatus, ok, REQUESTS, VIEW_ALL, type PermissionGrant } from './fixtures';
import {
  changelogCount,
  eventsOf,
  gateCast,
  hookLifecycleEvents,
  LIFECYCLE_EVENT_NAMES,
  mainDeviceNames,
  mergeBranch,
  scenario,
} from './gate-support';
import { forSuite } from '../../../support/prepared';

/** Someone who may merge branches but is not the author. */
const MERGE_ONLY: PermissionGrant[] = [
  ...VIEW_ALL,
  { object_types: ['branching.branch'], actions: ['merge', 'change'] },
];
/** change_control.override_gate: the action `override` on the object type `change_control.gate`. */
const OVERRIDE_GATE = (constraints?: Record<string, unknown>): PermissionGrant => ({
  object_types: ['change_control.gate'],
  actions: ['override'],
  ...(constraints ? { constraints } : {}),
});

const override = (client: TestService['admin'], id: number, body: unknown) =>
  client.post(`${REQUESTS}${id}/override/`, body);

describe('change control: accountable override (change-requests/{id}/override/)', () => {
  const svc = suiteService();
  const cast = forSuite(() => gateCast(svc));
  before(async () => {
    await hookLifecycleEvents(svc, 'http://127.0.0.1:9/hook', [...LIFECYCLE_EVENT_NAMES, 'change_request_overridden']);
  });
  afterEach(() => svc.clock.set('2026-11-01T09:00:00Z'));

  it('Override: a holder of override_gate merges a request the gate refuses; reason, person and overridden reason are recorded, in the changelog, and change_request_overridden fires', async () => {
    const s = await scenario(cast, 'ovr-merge', { upTo: 'needs-review' });
    const holder = await actor(svc, 'gate-overrider', [...MERGE_ONLY, OVERRIDE_GATE()]);
    const shown = await detail(holder.client, s.cr.id);
    assert.equal(shown.actions.override.allowed, true);
    assert.equal(shown.override, null);

    const cr = await ok(override(holder.client, s.cr.id, { reason: '  Outage fix, reviewer unreachable  ' }));
    assert.equal(cr.status, 'completed');
    assert.equal(cr.override.reason, 'Outage fix, reviewer unreachable');
    assert.equal(cr.override.user.username, 'gate-overrider');
    assert.equal(cr.override.time, '2026-11-01T09:00:00.000Z');
    assert.match(cr.override.overridden_reason, /Rule "netops" of policy "Devices" has 0 of 1 required approval/);
    assert.ok((await mainDeviceNames(svc)).includes('ovr-merge-dev'), 'the branch merged');
    assert.deepEqual((await detail(cast.author.client, s.cr.id)).override, cr.override, 'shown to every reader');

    const log = await ok(
      svc.admin.get(
        `/api/core/object-changes/?changed_object_type=change_control.changerequest&changed_object_id=${s.cr.id}&limit=100`,
      ),
    );
    const entry = log.results.find(
      (e: any) => e.postchange_data?.override_reason && !e.prechange_data?.override_reason,
    );
    assert.ok(entry, 'the override is in the changelog');
    assert.equal(entry.postchange_data.override_by, holder.id);
    assert.match(entry.postchange_data.overridden_reason, /0 of 1 required approval/);

    const events = await eventsOf(svc, s.cr.id);
    assert.ok(events.includes('change_request_overridden'), events.join());
    assert.ok(events.indexOf('change_request_overridden') < events.indexOf('change_request_completed'), events.join());
  });

  it('Override: refused without override_gate (403), with a grant whose constraints exclude the request (403), and nothing is written', async () => {
    const s = await scenario(cast, 'ovr-denied', { upTo: 'needs-review' });
    const plain = await actor(svc, 'plain-merger', MERGE_ONLY);
    const constrained = await actor(svc, 'constrained-overrider', [...MERGE_ONLY, OVERRIDE_GATE({ ref: 'CHG-OTHER' })]);
    assert.equal((await detail(plain.client, s.cr.id)).actions.override.allowed, false);
    assert.equal((await detail(constrained.client, s.cr.id)).actions.override.allowed, false);
    const before = await changelogCount(svc);
    expectStatus(await override(plain.client, s.cr.id, { reason: 'because' }), 403);
    expectStatus(await override(constrained.client, s.cr.id, { reason: 'because' }), 403);
    assert.equal(await changelogCount(svc), before, 'nothing recorded');
    assert.ok(!(await mainDeviceNames(svc)).includes('ovr-denied-dev'));

    await ok(cast.author.client.patch(`${REQUESTS}${s.cr.id}/`, { ref: 'CHG-OTHER' }));
    assert.equal(
      (await detail(constrained.client, s.cr.id)).actions.override.allowed,
      true,
      'the constraint now admits the request',
    );
    await ok(override(constrained.client, s.cr.id, { reason: 'in scope now' }));
  });

  it('Override: needs branching.merge_branch too (403), and a reason: missing, empty or blank is a 400 naming reason', async () => {
    const s = await scenario(cast, 'ovr-reason', { upTo: 'needs-review' });
    const noMerge = await actor(svc, 'override-no-merge', [...VIEW_ALL, OVERRIDE_GATE()]);
    expectStatus(await override(noMerge.client, s.cr.id, { reason: 'x' }), 403);
    const holder = await actor(svc, 'override-reasonless', [...MERGE_ONLY, OVERRIDE_GATE()]);
    for (const body of [{}, { reason: '' }, { reason: '   ' }, { reason: 42 }]) {
      const res = await override(holder.client, s.cr.id, body);
      expectStatus(res, 400, JSON.stringify(body));
      assert.ok(res.body.reason, JSON.stringify(res.body));
    }
    assert.equal((await detail(holder.client, s.cr.id)).status, 'needs-review');
  });

  it('Override: refused (409) when nothing blocks, on a draft, and on a closed request; 404 for a request the caller cannot see', async () => {
    const holder = await actor(svc, 'override-409', [...MERGE_ONLY, OVERRIDE_GATE()]);
    const ready = await scenario(cast, 'ovr-ready');
    const nothing = await override(holder.client, ready.cr.id, { reason: 'just because' });
    expectStatus(nothing, 409);
    assert.match(nothing.body.detail, /Nothing blocks/);
    assert.equal((await detail(holder.client, ready.cr.id)).actions.override.allowed, false);

    const draft = await scenario(cast, 'ovr-draft', { upTo: 'draft' });
    expectStatus(await override(holder.client, draft.cr.id, { reason: 'skip review' }), 409);
    await ok(mergeBranch(cast.author.client, ready.branch.id));
    expectStatus(await override(holder.client, ready.cr.id, { reason: 'again' }), 409);

    const blind = await actor(svc, 'override-blind', [
      { object_types: ['branching.branch'], actions: ['view', 'merge', 'change'] },
      OVERRIDE_GATE(),
    ]);
    expectStatus(await override(blind.client, draft.cr.id, { reason: 'x' }), 404);
  });

  it('Change-window override as a case of it: a window holder may override a request only its window blocks, not one a review blocks', async () => {
    const holder = await actor(svc, 'window-override-route', [
      ...MERGE_ONLY,
      { object_types: ['change_control.changerequest'], actions: ['override_window'] },
    ]);
    const review = await scenario(cast, 'ovr-window-review', {
      upTo: 'needs-review',
      fields: { scheduled_start: '2026-11-05T00:00:00Z' },
    });
    expectStatus(await override(holder.client, review.cr.id, { reason: 'window' }), 403);

    const s = await scenario(cast, 'ovr-window', { fields: { scheduled_start: '2026-11-05T00:00:00Z' } });
    assert.equal((await detail(holder.client, s.cr.id)).actions.override.allowed, true);
    const cr = await ok(override(holder.client, s.cr.id, { reason: 'Emergency change' }));
    assert.equal(cr.status, 'completed');
    assert.equal(cr.override.reason, 'Emergency change');
    assert.match(cr.override.overridden_reason, /change window opens at 2026-11-05T00:00:00\.000Z/);
  });

  it('Change-window override as a case of it: a plain merge outside the window by a window holder is recorded as an override with the event', async () => {
    const s = await scenario(cast, 'ovr-window-merge', { fields: { scheduled_end: '2026-11-01T08:00:00Z' } });
    const holder = await actor(svc, 'window-merger', [
      ...MERGE_ONLY,
      { object_types: ['change_control.changerequest'], actions: ['override_window'] },
    ]);
    await ok(mergeBranch(holder.client, s.branch.id));
    const cr = await detail(holder.client, s.cr.id);
    assert.equal(cr.status, 'completed');
    assert.match(cr.override.reason, /outside the change window/);
    assert.equal(cr.override.user.username, 'window-merger');
    assert.match(cr.override.overridden_reason, /change window closed at 2026-11-01T08:00:00\.000Z/);
    assert.ok((await eventsOf(svc, s.cr.id)).includes('change_request_overridden'));

    const inside = await scenario(cast, 'ovr-window-inside');
    await ok(mergeBranch(cast.author.client, inside.branch.id));
    assert.equal(
      (await detail(cast.author.client, inside.cr.id)).override,
      null,
      'a merge the gate allowed is no override',
    );
  });
});
