import assert from 'node:assert/strict';
import { hasVisibleText } from '../../../../contract/api/common';
import { suiteService, type ApiResponse } from '../../../support/service';
import { forSuite } from '../../../support/prepared';
import { COMMENTS, expectStatus, POLICIES, REQUESTS, REVIEWS, actor, type PermissionGrant } from './fixtures';
import { scene, world } from './reviews-comments-fixtures';

/** Text that shows nothing: white space, zero-width and other format characters, fillers, lone marks. */
const INVISIBLE = [
  '   ',
  '\u200b',
  '\u200b\u200c\u200d\u2060\ufeff',
  ' \u00a0\u3000\t\n',
  '\u180e',
  '\u3164\u115f',
  '\u2800',
  '\u0301',
  '\u202e\u202d',
];

describe('change control: required text needs at least one visible character', () => {
  const svc = suiteService();
  const w = forSuite(() => world(svc));

  it('tells visible text from text that shows nothing (white space, zero-width and format characters, fillers, lone combining marks)', () => {
    for (const text of INVISIBLE) assert.equal(hasVisibleText(text), false, JSON.stringify(text));
    for (const text of ['a', ' x ', '\u200bok', 'é', '日本', '🙂', '-']) assert.equal(hasVisibleText(text), true, text);
  });

  it('Required text: an override reason, a rejection comment, a comment text, a journal entry and a policy name made only of invisible characters are 400 naming the field; nothing is written', async () => {
    const s = await scene(w);
    const overrider = await actor(svc, 'overrider', [
      { object_types: ['change_control.changerequest', 'branching.branch'], actions: ['view'] },
      { object_types: ['branching.branch'], actions: ['merge'] },
      { object_types: ['change_control.gate'], actions: ['override'] },
    ] as PermissionGrant[]);
    for (const text of INVISIBLE) {
      const cases: Array<[Promise<ApiResponse>, string]> = [
        [overrider.client.post(`${REQUESTS}${s.cr.id}/override/`, { reason: text }), 'reason'],
        [s.bob.client.post(REVIEWS, { change_request: s.cr.id, decision: 'reject', comment: text }), 'comment'],
        [s.bob.client.post(COMMENTS, { change_request: s.cr.id, change_diff: s.changes[0]!.id, text }), 'text'],
        [
          svc.admin.post('/api/extras/journal-entries/', {
            assigned_object_type: 'change_control.changerequest',
            assigned_object_id: s.cr.id,
            comments: text,
          }),
          'comments',
        ],
        [svc.admin.post(POLICIES, { name: text }), 'name'],
      ];
      for (const [sent, field] of cases) {
        const res = await sent;
        expectStatus(res, 400, `${field} ${JSON.stringify(text)}`);
        assert.ok(Array.isArray(res.body[field]), `names ${field}: ${JSON.stringify(res.body)}`);
      }
    }
    const cr = (await svc.admin.get(`${REQUESTS}${s.cr.id}/`)).body;
    assert.equal(cr.override, null);
    assert.equal((await svc.admin.get(`${REVIEWS}?change_request_id=${s.cr.id}`)).body.count, 0);
  });
});
