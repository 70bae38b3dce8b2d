// The Changed Objects tree: grouping, viewed marks (kept per request and object, dropped when the
// change differs from the one marked), the rows, and the order Next/Previous Change walk in.
import assert from 'node:assert/strict';
import {
  adjacentChange,
  changedObjectItem,
  changedObjectsRoots,
  changeGroupItem,
  groupChanges,
  orphanThreadsItem,
  treeOrder,
  changedObjectsDescription,
} from '../../extension/core/changed-objects';
import {
  changeDigest,
  isViewed,
  markViewed,
  pruneViewed,
  stableJson,
  viewedStorageKey,
} from '../../extension/core/viewed';
import { makeChange } from './fixtures';

const NOW = new Date('2026-11-01T10:00:00.000Z');

describe('extension: Changed Objects and viewed marks', () => {
  const changes = [
    makeChange({ id: 1, object_type: 'ipam.prefix', object_id: 9, object_repr: '10.0.0.0/24' }),
    makeChange({
      id: 2,
      object_type: 'dcim.device',
      object_id: 7,
      object_repr: 'sw2',
      action: 'create',
      original: null,
    }),
    makeChange({ id: 3, object_type: 'dcim.device', object_id: 5, object_repr: 'sw1', conflicts: ['rack'] }),
    makeChange({
      id: 4,
      object_type: 'dcim.interface',
      object_id: 3,
      object_repr: 'eth0',
      action: 'delete',
      modified: null,
    }),
  ];

  it('groups changes by object type, types and objects in name order', () => {
    const groups = groupChanges(changes);
    assert.deepEqual(
      groups.map((g) => [g.objectType, g.changes.map((c) => c.object_repr)]),
      [
        ['dcim.device', ['sw1', 'sw2']],
        ['dcim.interface', ['eth0']],
        ['ipam.prefix', ['10.0.0.0/24']],
      ],
    );
    assert.deepEqual(
      treeOrder(changes).map((c) => c.id),
      [3, 2, 4, 1],
    );
    assert.equal(changeGroupItem(7, groups[0], 1).description, '1 of 2 viewed');
    assert.equal(changeGroupItem(7, groups[0], 0).description, '2');
  });

  it('walks in tree order skipping viewed changes, wrapping around, and stops when all others are viewed', () => {
    const order = treeOrder(changes); // 3, 2, 4, 1
    const none = () => false;
    assert.equal(adjacentChange(order, null, none, 1)?.id, 3);
    assert.equal(adjacentChange(order, null, none, -1)?.id, 1);
    assert.equal(adjacentChange(order, 3, none, 1)?.id, 2);
    assert.equal(adjacentChange(order, 1, none, 1)?.id, 3, 'wraps');
    assert.equal(adjacentChange(order, 3, none, -1)?.id, 1, 'wraps backwards');
    const viewed = new Set([2, 4]);
    assert.equal(adjacentChange(order, 3, (c) => viewed.has(c.id), 1)?.id, 1);
    assert.equal(adjacentChange(order, 1, (c) => viewed.has(c.id), -1)?.id, 3);
    assert.equal(
      adjacentChange(order, 3, (c) => c.id !== 3, 1),
      null,
    );
    assert.equal(adjacentChange([], null, none, 1), null);
    assert.equal(adjacentChange(order, 999, none, 1)?.id, 3, 'an unknown current change starts from the top');
    // The current change, no longer shown, is where Next goes when every other one is viewed.
    assert.equal(adjacentChange(order, 2, (c) => c.id !== 2, 1, false)?.id, 2);
    assert.equal(
      adjacentChange(order, 2, (c) => c.id !== 2, 1, true),
      null,
    );
  });

  it('marks a change viewed with a digest of its states, which any change to it invalidates', () => {
    const sw1 = changes[2];
    let marks = markViewed(undefined, sw1, true);
    assert.deepEqual(Object.keys(marks), ['dcim.device:5']);
    assert.equal(isViewed(marks, sw1), true);
    // The same change with its keys in another order is the same change.
    assert.equal(
      isViewed(marks, { ...sw1, modified: Object.fromEntries(Object.entries(sw1.modified!).reverse()) }),
      true,
    );
    const edited = { ...sw1, modified: { ...sw1.modified, status: 'offline' } };
    assert.equal(isViewed(marks, edited), false);
    assert.equal(isViewed(marks, { ...sw1, action: 'delete' as const }), false);
    marks = markViewed(marks, sw1, false);
    assert.deepEqual(marks, {});
  });

  it('drops the marks whose change differs or left the branch, and says so', () => {
    const [prefix, sw2, sw1] = changes;
    const marks = markViewed(markViewed(markViewed(undefined, prefix, true), sw2, true), sw1, true);
    const same = pruneViewed(marks, changes);
    assert.equal(same.changed, false);
    assert.deepEqual(same.marks, marks);
    const after = pruneViewed(marks, [prefix, { ...sw1, modified: { ...sw1.modified, rack: 'R9' } }]);
    assert.equal(after.changed, true);
    assert.deepEqual(Object.keys(after.marks), ['ipam.prefix:9']);
  });

  it('keeps marks per service and user, and digests canonical JSON', () => {
    assert.notEqual(viewedStorageKey('http://a', 1), viewedStorageKey('http://a', 2));
    assert.notEqual(viewedStorageKey('http://a', 1), viewedStorageKey('http://b', 1));
    assert.equal(stableJson({ b: [1, { d: 1, c: null }], a: 'x', u: undefined }), '{"a":"x","b":[1,{"c":null,"d":1}]}');
    assert.equal(changeDigest(changes[0]), changeDigest({ ...changes[0] }));
  });

  it('shows a changed object with its action, conflicts, open threads and viewed checkbox, and opens its diff', () => {
    const sw1 = changes[2];
    const item = changedObjectItem(7, sw1, { threads: 2, viewed: true, now: NOW });
    assert.equal(item.label, 'sw1');
    assert.equal(item.description, 'Updated · conflicts · 2 open threads');
    assert.deepEqual(item.checkbox, { checked: true, tooltip: 'Viewed (clears itself when the change changes)' });
    assert.deepEqual(item.command, { id: 'changeControl.openChangeDiff', title: 'Open Change', args: [7, 3] });
    assert.equal(item.contextValue, 'changedObject;conflict;viewed;');
    assert.deepEqual(item.resource, { path: '/Change request #7/dcim.device/sw1.yaml', query: 'id=5&side=modified' });
    assert.deepEqual(item.icon, { id: 'warning', color: 'gitDecoration.conflictingResourceForeground' });
    assert.match(item.tooltip!, /Conflicts with main on: rack/);
    assert.match(item.tooltip!, /Changed 30 minutes ago \(/);

    const eth0 = changedObjectItem(7, changes[3], { threads: 1, viewed: false, now: NOW });
    assert.equal(eth0.description, 'Deleted · 1 open thread');
    assert.equal(eth0.checkbox?.checked, false);
    assert.equal(eth0.contextValue, 'changedObject;');
    assert.deepEqual(
      eth0.resource,
      { path: '/Change request #7/dcim.interface/eth0.yaml', query: 'id=3&side=original' },
      'a delete shows its baseline',
    );
  });

  it('shows a row while loading, none after a failure, a word for an empty or deleted branch, the groups, then the threads left behind', () => {
    const kinds = (nodes: ReturnType<typeof changedObjectsRoots>) =>
      nodes.map((n) =>
        n.kind === 'group'
          ? n.group.objectType
          : n.kind === 'message'
            ? n.label
            : `${n.kind} ${'count' in n ? n.count : ''}`,
      );
    assert.deepEqual(kinds(changedObjectsRoots(undefined, false, 0)), ['Loading the changes…']);
    assert.deepEqual(changedObjectsRoots(undefined, true, 0), []);
    assert.deepEqual(kinds(changedObjectsRoots({ changes: [], branchDeleted: false }, false, 0)), [
      'The branch has no changes.',
    ]);
    assert.deepEqual(kinds(changedObjectsRoots({ changes: [], branchDeleted: true }, false, 0)), [
      'The branch is deleted: no changes to show.',
    ]);
    assert.deepEqual(kinds(changedObjectsRoots({ changes, branchDeleted: false }, false, 2)), [
      'dcim.device',
      'dcim.interface',
      'ipam.prefix',
      'orphans 2',
    ]);
    const orphans = orphanThreadsItem(7, 1);
    assert.equal(orphans.label, '1 thread on changes no longer in the branch');
    assert.deepEqual(orphans.command, {
      id: 'changeControl.openChangeRequest',
      title: 'Open Change Request',
      args: [7],
    });
  });

  it('says how far the review went in its description, not in a badge (the activity badge counts only the reviews waiting for the user)', () => {
    assert.equal(changedObjectsDescription(undefined, 0, 0), undefined);
    assert.equal(changedObjectsDescription({ title: 'Move sw1', branch_name: 'b' }, 4, 1), 'Move sw1 · 1 of 4 viewed');
    assert.equal(changedObjectsDescription({ title: '', branch_name: 'move-sw1' }, 0, 0), 'move-sw1');
  });
});
