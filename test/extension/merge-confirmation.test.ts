// Merging says what it overwrites: the confirmation's words from the request's changes or from
// the service's refusal, and the client's acknowledgement (with a service that does not know it).
import assert from 'node:assert/strict';
import { ApiClient, MergeConflictError } from '../../extension/core/api-client';
import {
  mergeConfirmation,
  overwrittenByChanges,
  overwrittenByRefusal,
  shortValue,
} from '../../extension/core/merge-confirmation';
import { makeChange } from './fixtures';

const sw1 = makeChange({
  id: 11,
  object_repr: 'sw1',
  object_type: 'dcim.device',
  original: { name: 'sw1', rack: 'R1', status: 'active' },
  modified: { name: 'sw1', rack: 'R2', status: 'planned' },
  current: { name: 'sw1', rack: 'R3', status: 'active' },
  conflicts: ['rack'],
});
const sw2 = makeChange({
  id: 12,
  object_repr: 'sw2',
  action: 'create',
  original: null,
  current: null,
  conflicts: null,
});

describe('extension: the merge confirmation', () => {
  it("lists each conflicting object and attribute with main's value now and the branch's, and asks for the acknowledgement in words", () => {
    const ask = mergeConfirmation('Move sw1 to rack R2', 'move-sw1', overwrittenByChanges([sw1, sw2]));
    assert.equal(ask.message, `Merge "Move sw1 to rack R2"? It overwrites main's changes to 1 object.`);
    assert.equal(
      ask.detail,
      [
        "Main changed this value after branch move-sw1 was made; merging replaces main's value with the branch's:",
        '',
        "• sw1 (dcim.device) · rack: main now R3 → the branch's R2",
        '',
        "Merge only if the branch's value is what main should have.",
      ].join('\n'),
    );
    assert.equal(ask.confirm, "Overwrite Main's Value and Merge");
    assert.equal(ask.acknowledges, true);
  });

  it("asks for the acknowledgement in the service's words when it refused for conflicts the caller cannot see", () => {
    const ask = mergeConfirmation('T', 'b', [], {
      refusal: 'Branch "b" conflicts with main (1 object you cannot see).',
    });
    assert.equal(ask.acknowledges, true);
    assert.equal(ask.detail, 'Branch "b" conflicts with main (1 object you cannot see).');
    assert.equal(ask.confirm, "Overwrite Main's Values and Merge");
  });

  it('asks plainly when nothing conflicts (nothing to acknowledge)', () => {
    const ask = mergeConfirmation('Add sw2', 'add-sw2', overwrittenByChanges([sw2]));
    assert.deepEqual(ask, {
      message: 'Merge "Add sw2"?',
      detail:
        'Branch add-sw2 is merged into main: its changes are applied to main and the change request is completed.',
      confirm: 'Merge',
      acknowledges: false,
    });
  });

  it("reads the service's refusal (409 conflicts): objects deleted on one side, many values, long values shortened", () => {
    const values = overwrittenByRefusal([
      {
        change: 11,
        object_type: 'dcim.device',
        object_id: 5,
        object_repr: 'sw1',
        attributes: ['rack', 'status'],
        main: { rack: 'R3', status: 'offline' },
        branch: { rack: 'R2', status: 'planned' },
      },
      {
        change: 13,
        object_type: 'ipam.prefix',
        object_id: 9,
        object_repr: '10.0.0.0/24',
        attributes: ['description'],
        main: { description: null },
        branch: { description: 'x'.repeat(100) },
      },
    ]);
    const ask = mergeConfirmation('T', 'b', values);
    assert.equal(ask.confirm, 'Overwrite 3 Values on Main and Merge');
    assert.match(ask.message, /to 2 objects\.$/);
    assert.match(ask.detail, /• sw1 \(dcim\.device\) · status: main now offline → the branch's planned/);
    assert.match(ask.detail, /• 10\.0\.0\.0\/24 \(ipam\.prefix\) · description: main now null → the branch's x{57}…/);
    const many = mergeConfirmation(
      'T',
      'b',
      Array.from({ length: 25 }, () => values[0]!),
    );
    assert.match(many.detail, /… and 5 more/);
    assert.equal(shortValue({ a: 1 }), '{"a":1}');
    assert.equal(shortValue(undefined), '(none)');
  });

  it('sends the acknowledgement, turns a refusal naming conflicts into MergeConflictError, and merges without it on a service that does not know it', async () => {
    const sent: unknown[] = [];
    let mode: 'refuse' | 'unknown' | 'ok' = 'refuse';
    const result = {
      branch: {
        id: 1,
        url: 'u',
        display: 'b',
        created: '2026-11-01T09:00:00Z',
        last_updated: '2026-11-01T09:00:00Z',
        name: 'b',
        description: '',
        status: 'merged',
        schema_id: 's',
        owner: null,
        last_sync: null,
        merged_time: null,
        merged_by: null,
      },
      commit: true,
      changes: [],
    };
    const fake = (async (_url: string, init: RequestInit) => {
      const body = JSON.parse(String(init.body));
      sent.push(body);
      const json = (status: number, b: unknown) =>
        new Response(JSON.stringify(b), { status, headers: { 'Content-Type': 'application/json' } });
      if (mode === 'unknown' && body.acknowledge_conflicts)
        return json(400, { acknowledge_conflicts: ['Unknown field.'] });
      if (mode === 'refuse' && !body.acknowledge_conflicts)
        return json(409, {
          detail: 'The merge overwrites changes on main.',
          conflicts: [
            {
              change: 11,
              object_type: 'dcim.device',
              object_id: 5,
              object_repr: 'sw1',
              attributes: ['rack'],
              main: { rack: 'R3' },
              branch: { rack: 'R2' },
            },
          ],
        });
      return json(200, result);
    }) as typeof fetch;
    const client = new ApiClient({ baseUrl: 'http://cc.test', token: 't', fetch: fake });

    await assert.rejects(client.mergeBranch(1), (e: unknown) => {
      assert.ok(e instanceof MergeConflictError);
      assert.equal(e.conflicts[0]!.object_repr, 'sw1');
      return true;
    });
    assert.equal((await client.mergeBranch(1, { acknowledgeConflicts: true })).commit, true);
    mode = 'unknown';
    assert.equal((await client.mergeBranch(1, { acknowledgeConflicts: true })).commit, true);
    assert.deepEqual(sent, [
      { commit: true },
      { commit: true, acknowledge_conflicts: true },
      { commit: true, acknowledge_conflicts: true },
      { commit: true },
    ]);
  });
});
