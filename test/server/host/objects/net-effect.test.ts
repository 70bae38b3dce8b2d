import assert from 'node:assert/strict';
import { nextNetEffect, type NetChange } from '../../../../server/host/objects/net-effect';

describe('net effect of writes in a branch', () => {
  const base = { name: 'a', status: 'active' };

  it('records the first write against the baseline', () => {
    assert.deepEqual(nextNetEffect(null, { op: 'create', attrs: base }), {
      kind: 'set',
      change: { action: 'create', original: null, modified: base },
    });
    assert.deepEqual(nextNetEffect(null, { op: 'update', before: base, attrs: { ...base, status: 'x' } }), {
      kind: 'set',
      change: { action: 'update', original: base, modified: { ...base, status: 'x' } },
    });
    assert.deepEqual(nextNetEffect(null, { op: 'update', before: base, attrs: { status: 'active', name: 'a' } }), {
      kind: 'unchanged',
    });
    assert.deepEqual(nextNetEffect(null, { op: 'delete', before: base }), {
      kind: 'set',
      change: { action: 'delete', original: base, modified: null },
    });
  });

  it('keeps a create a create, and a create then delete leaves nothing', () => {
    const created: NetChange = { action: 'create', original: null, modified: base };
    assert.deepEqual(nextNetEffect(created, { op: 'update', before: base, attrs: { name: 'b' } }), {
      kind: 'set',
      change: { action: 'create', original: null, modified: { name: 'b' } },
    });
    assert.deepEqual(nextNetEffect(created, { op: 'delete', before: base }), { kind: 'remove' });
  });

  it('keeps the first baseline, drops an update back to it, and turns update then delete into a delete', () => {
    const updated: NetChange = { action: 'update', original: base, modified: { ...base, status: 'x' } };
    assert.deepEqual(
      nextNetEffect(updated, { op: 'update', before: updated.modified!, attrs: { ...base, status: 'y' } }),
      {
        kind: 'set',
        change: { action: 'update', original: base, modified: { ...base, status: 'y' } },
      },
    );
    assert.deepEqual(nextNetEffect(updated, { op: 'update', before: updated.modified!, attrs: base }), {
      kind: 'remove',
    });
    assert.deepEqual(nextNetEffect(updated, { op: 'delete', before: updated.modified! }), {
      kind: 'set',
      change: { action: 'delete', original: base, modified: null },
    });
  });

  it('refuses writes to an object the branch deleted', () => {
    assert.throws(() =>
      nextNetEffect({ action: 'delete', original: base, modified: null }, { op: 'update', before: base, attrs: base }),
    );
  });
});
