// The Branch Objects view as data: lists read a page (and one more) at a time, never whole;
// rows that say what the branch did to each object and offer what the user may do with it.
import assert from 'node:assert/strict';
import type { BranchAccess, BranchObjectTypeAccess } from '../../contract/api/branching';
import {
  changeRow,
  listedFileNames,
  moreRow,
  objectRow,
  PagedList,
  typeRow,
  type ListedObject,
} from '../../extension/core/branch-objects';
import { makeChange } from './fixtures';

const DEVICE: BranchObjectTypeAccess = {
  object_type: 'dcim.device',
  display: 'Device',
  url: 'http://127.0.0.1:8000/api/dcim/devices/',
  view: true,
  add: true,
  change: true,
  delete: true,
};
const writer: BranchAccess = { branch: 1, write: true, reason: null, object_types: [DEVICE] };
const reader: BranchAccess = {
  branch: 1,
  write: false,
  reason: 'You may not write to branch "b".',
  object_types: [DEVICE],
};

describe('extension: the Branch Objects view as data', () => {
  it('reads a list a page at a time, asking one item more than it keeps (to know the next name), and stops at the end', async () => {
    const all = Array.from({ length: 5 }, (_, i) => ({ id: i + 1, name: i < 3 ? `sw${i}` : 'eth0', display: '' }));
    const asked: Array<[number, number]> = [];
    const list = new PagedList<ListedObject>(async (offset, limit) => {
      asked.push([offset, limit]);
      return { count: all.length, results: all.slice(offset, offset + limit) };
    }, 3);
    assert.equal(list.complete, false);
    assert.deepEqual(
      (await list.more()).map((o) => o.id),
      [1, 2, 3],
    );
    assert.equal(list.peek?.id, 4);
    assert.deepEqual(listedFileNames(list), ['sw0.yaml', 'sw1.yaml', 'sw2.yaml']);
    assert.deepEqual(
      (await list.more()).map((o) => o.id),
      [4, 5],
    );
    assert.deepEqual(listedFileNames(list).slice(3), ['eth0 (4).yaml', 'eth0 (5).yaml']);
    assert.equal(list.complete, true);
    assert.deepEqual(await list.more(), []);
    assert.deepEqual(asked, [
      [0, 4],
      [3, 4],
    ]);
  });

  it('marks an object with what the branch did to it, and offers Revert and Delete only to those who may write the branch (and delete the type)', () => {
    const sw1 = { id: 5, name: 'sw1', display: 'sw1' };
    const changed = objectRow('b', writer, DEVICE, sw1, 'sw1.yaml', { id: 9, action: 'update', conflicts: null });
    assert.equal(changed.description, 'Updated');
    assert.equal(changed.contextValue, 'branchObject;changed;revertable;deletable;');
    assert.deepEqual(changed.address, { path: '/branches/b/dcim.device/sw1.yaml', query: '' });
    const conflicted = objectRow('b', writer, DEVICE, sw1, 'sw1.yaml', {
      id: 9,
      action: 'update',
      conflicts: ['rack'],
    });
    assert.equal(conflicted.description, 'Updated · conflicts');
    assert.equal(objectRow('b', writer, DEVICE, sw1, 'sw1.yaml', null).contextValue, 'branchObject;deletable;');
    assert.equal(
      objectRow('b', reader, DEVICE, sw1, 'sw1.yaml', { id: 9, action: 'update', conflicts: null }).contextValue,
      'branchObject;changed;',
    );
    assert.equal(
      objectRow('b', writer, { ...DEVICE, delete: false }, sw1, 'sw1.yaml', null).contextValue,
      'branchObject;',
    );
  });

  it("lists a change of the branch with its object's document; a deleted object opens main's version (named with its id)", () => {
    const update = changeRow('b', writer, DEVICE, makeChange({ id: 9, object_id: 5, object_repr: 'sw1' }), 'sw1.yaml');
    assert.deepEqual(update.address, { path: '/branches/b/dcim.device/sw1.yaml', query: '' });
    const deleted = changeRow(
      'b',
      writer,
      DEVICE,
      makeChange({
        id: 10,
        object_id: 6,
        object_repr: 'sw6',
        action: 'delete',
        modified: null,
        original: { name: 'sw6' },
      }),
    );
    assert.deepEqual(deleted.address, { path: '/branches/b/dcim.device/sw6 (6).yaml', query: 'version=main' });
    assert.equal(deleted.contextValue, 'branchObject;changed;deleted;revertable;');
  });

  it('says per type how many objects the branch changes, offers New Object where the user may add, and Load more with how many are shown', () => {
    assert.equal(typeRow(DEVICE, 3).description, 'dcim.device · 3 changed');
    assert.equal(typeRow(DEVICE, 0).description, 'dcim.device');
    assert.equal(typeRow(DEVICE, 3).contextValue, 'branchType;addable;');
    assert.equal(typeRow({ ...DEVICE, add: false }, null).contextValue, 'branchType;');
    assert.equal(moreRow(100, 12_345, 'objects').description, '100 of 12345 objects');
  });
});
