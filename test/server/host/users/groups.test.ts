import assert from 'node:assert/strict';
import { eachTestService } from '../../../support/service';

describe('host: groups', () => {
  const svc = eachTestService();

  it('creates, reads, lists, filters, updates and deletes a group', async () => {
    const created = await svc.admin.post('/api/users/groups/', { name: 'netops' });
    assert.equal(created.status, 201);
    assert.equal(created.body.display, 'netops');
    await svc.admin.post('/api/users/groups/', { name: 'reviewers' });

    const list = await svc.admin.get('/api/users/groups/?name=netops&name=reviewers&ordering=-name');
    assert.deepEqual(
      list.body.results.map((g: { name: string }) => g.name),
      ['reviewers', 'netops'],
    );

    const patched = await svc.admin.patch(`/api/users/groups/${created.body.id}/`, {
      description: 'Network operations',
    });
    assert.equal(patched.status, 200);
    assert.equal(patched.body.description, 'Network operations');

    assert.equal((await svc.admin.delete(`/api/users/groups/${created.body.id}/`)).status, 204);
    assert.equal((await svc.admin.get(`/api/users/groups/${created.body.id}/`)).status, 404);
  });

  it('refuses a duplicate name with a field error, not a server error', async () => {
    await svc.admin.post('/api/users/groups/', { name: 'netops' });
    const dup = await svc.admin.post('/api/users/groups/', { name: 'netops' });
    assert.equal(dup.status, 400);
    assert.ok(dup.body.name);
  });

  it('pages with limit and offset and links next/previous', async () => {
    for (let i = 0; i < 5; i++) await svc.admin.post('/api/users/groups/', { name: `g${i}` });
    const page = await svc.admin.get('/api/users/groups/?limit=2&offset=2');
    assert.equal(page.body.count, 5);
    assert.equal(page.body.results.length, 2);
    assert.match(page.body.next, /offset=4/);
    assert.match(page.body.previous, /limit=2/);
  });
});
