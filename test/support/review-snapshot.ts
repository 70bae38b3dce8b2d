// A large review as the panel receives it: `count` changed objects of several shapes (scalar
// edits, a 40-line config with one line changed, creates, deletes, conflicts), threads on some
// of them (on attributes and on whole objects), reviews and checks. Used by the webview's tests
// and by `npm run bench` (which measures the panel opening and answering with it).
import type { ChangeRequestSnapshot } from '../../contract/webview/protocol';
import {
  ALICE,
  BOB,
  actions,
  makeChange,
  makeChangeRequest,
  makeCheck,
  makeComment,
  makeEvaluation,
  makeReview,
  makeSnapshot,
} from '../extension/fixtures';

const CONFIG = Array.from({ length: 40 }, (_, i) =>
  i % 5 === 0 ? `interface Ethernet${i / 5}` : `  description uplink ${i}`,
).join('\n');

export function largeReviewSnapshot(count: number, opts: { threadsEvery?: number } = {}): ChangeRequestSnapshot {
  const threadsEvery = opts.threadsEvery ?? 10;
  const changes = Array.from({ length: count }, (_, i) => {
    const id = i + 1;
    const name = `sw${String(id).padStart(4, '0')}`;
    const base = {
      name,
      status: 'active',
      site: `site-${id % 7}`,
      rack: `R${id % 40}`,
      serial: `SN${100000 + id}`,
      config: CONFIG,
    };
    if (id % 50 === 0)
      return makeChange({
        id,
        object_id: id,
        object_repr: name,
        action: 'create',
        original: null,
        current: null,
        modified: base,
      });
    if (id % 53 === 0)
      return makeChange({
        id,
        object_id: id,
        object_repr: name,
        action: 'delete',
        original: base,
        current: base,
        modified: null,
      });
    if (id % 4 === 0) {
      const lines = CONFIG.split('\n');
      lines[17] = `  description uplink ${id} (moved)`;
      return makeChange({
        id,
        object_id: id,
        object_repr: name,
        original: base,
        current: base,
        modified: { ...base, config: lines.join('\n') },
      });
    }
    const conflict = id % 31 === 0;
    return makeChange({
      id,
      object_id: id,
      object_repr: name,
      original: base,
      modified: {
        ...base,
        status: 'planned',
        rack: `R${(id + 1) % 40}`,
        custom_fields: { owner: 'netops', ticket: `CHG-${id}` },
      },
      current: conflict ? { ...base, rack: 'R99' } : base,
      conflicts: conflict ? ['rack'] : null,
    });
  });
  const comments = changes
    .filter((c) => c.id % threadsEvery === 1)
    .flatMap((c, n) => {
      const root = makeComment({
        id: c.id * 10,
        change_diff: c.id,
        change_label: `dcim.device ${c.object_repr}`,
        author: BOB,
        attribute: n % 2 ? 'rack' : null,
        text: `Is **${c.object_repr}** right?`,
      });
      const reply = makeComment({
        id: c.id * 10 + 1,
        change_diff: c.id,
        change_label: root.change_label,
        parent: root.id,
        attribute: root.attribute,
        text: 'Yes, checked against the plan.',
      });
      return [root, reply];
    });
  return makeSnapshot({
    me: ALICE,
    changeRequest: makeChangeRequest({
      id: 1,
      title: 'Re-rack the access layer',
      description: 'Moves **every** access switch.\n\n- racks\n- status',
      status: 'needs-review',
      actions: actions(['review', 'comment', 'return_to_draft', 'abandon', 'run_checks'], {
        merge: 'Required check "ci/build" is pending.',
      }),
      merge_blocked_reason: 'Required check "ci/build" is pending.',
    }),
    evaluation: makeEvaluation(),
    checks: [
      makeCheck({ id: 1, name: 'ci/build', label: 'CI build', status: 'pending' }),
      makeCheck({
        id: 2,
        name: 'has-changes',
        label: 'Branch has changes',
        status: 'success',
        blocks_merge: false,
        completed: '2026-11-01T10:00:00.000Z',
      }),
    ],
    changes,
    comments,
    reviews: [makeReview({ id: 1, reviewer: BOB, decision: 'comment', comment: 'Looking.' })],
  });
}
