import assert from 'node:assert/strict';
import type { Ctx } from '../../../../server/host/core/context';
import { tableRows } from '../../../../server/host/db/table-rows';
import { domainForSuite } from '../../../support/domain';

// The row-by-id queries every keyed table shares (groups stand for all of them here; the
// resources' own suites exercise each table through its routes).
describe('repositories: the row-by-id queries of a keyed table', () => {
  const d = domainForSuite();
  const groups = tableRows((ctx: Ctx) => ctx.db, 'groups');
  const at = '2026-11-01T09:00:00.000Z';

  it('inserts (answering the id, or the stored row), reads, updates and removes one row by its id', async () => {
    const id = await d.write((tx) =>
      groups.insert(tx, { name: 'ops', description: '', created: at, last_updated: at }),
    );
    const stored = await d.write((tx) =>
      groups.insertRow(tx, { name: 'dev', description: 'd', created: at, last_updated: at }),
    );
    assert.equal(stored.name, 'dev');
    assert.notEqual(stored.id, id);
    assert.equal((await groups.byId(d.ctx(), id))?.name, 'ops');
    assert.equal(await groups.exists(d.ctx(), id), true);

    await d.write((tx) => groups.update(tx, id, { description: 'operations' }));
    assert.deepEqual(await groups.byId(d.ctx(), id), {
      id,
      name: 'ops',
      description: 'operations',
      created: at,
      last_updated: at,
    });
    assert.equal((await groups.byId(d.ctx(), stored.id))?.description, 'd', 'only the row named is updated');

    await d.write((tx) => groups.remove(tx, id));
    assert.equal(await groups.byId(d.ctx(), id), undefined);
    assert.equal(await groups.exists(d.ctx(), id), false);
    assert.equal(await groups.exists(d.ctx(), stored.id), true, 'only the row named is removed');
  });

  it('tells whether another row than the one named holds a value', async () => {
    const id = await d.write((tx) =>
      groups.insert(tx, { name: 'net', description: '', created: at, last_updated: at }),
    );
    assert.equal(await groups.taken(d.ctx(), 'name', 'net'), true);
    assert.equal(await groups.taken(d.ctx(), 'name', 'net', null), true);
    assert.equal(await groups.taken(d.ctx(), 'name', 'net', id), false, 'the row itself does not take its own name');
    assert.equal(await groups.taken(d.ctx(), 'name', 'nobody'), false);
    assert.equal(await groups.taken(d.ctx(), 'description', ''), true, 'any text column');
  });
});
