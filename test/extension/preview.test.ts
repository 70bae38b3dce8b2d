import assert from 'node:assert/strict';
import { branchOfPreviewPath, previewDocumentPath, previewMarkdown } from '../../extension/core/preview';
import { preview } from '../../contract/api/change-control';
import { ALICE } from './fixtures';

describe('extension: the preview of a branch before a change request exists', () => {
  const p = preview.parse({
    branch: { id: 3, name: 'edge-*fra1*', status: 'ready' },
    digest: 'd'.repeat(64),
    policies: [
      {
        id: 1,
        name: 'Devices',
        matched_object_types: ['dcim.device'],
        checks: ['ci/build'],
        enforcement: 'active',
        blocking_reasons: ['Rule "netops" of policy "Devices" has 0 of 1 required approval.'],
        rules: [
          {
            id: 7,
            name: 'netops',
            min_reviews: 1,
            approvals: 0,
            satisfied: false,
            approvers: [],
            eligible_users: [ALICE],
            eligible_groups: [{ id: 2, name: 'noc', empty: true }],
            empty_groups: ['noc'],
            outstanding_reviewers: [],
          },
        ],
      },
      {
        id: 2,
        name: 'Trial',
        matched_object_types: [],
        checks: [],
        enforcement: 'evaluate',
        blocking_reasons: ['Rule "security" of policy "Trial" has 0 of 1 required approval.'],
        rules: [],
      },
    ],
    checks: [
      {
        name: 'ci/build',
        label: 'CI build',
        required: true,
        registered: false,
        reporter_restricted: true,
        timeout_minutes: 30,
      },
    ],
    reasons: [
      'Rule "netops" of policy "Devices" has 0 of 1 required approval.',
      'Required check "CI build" waits for a report.',
    ],
  });

  it('lists the freezes that would apply, a recurring one by its rule, with times as the reader reads them (no ISO time)', () => {
    const text = previewMarkdown(
      preview.parse({
        ...p,
        reasons: ['Merging is frozen by "Quarter close" until 2026-11-28T22:33:06.952Z.'],
        freezes: [
          {
            id: 1,
            name: 'Quarter close',
            active: true,
            start: '2026-11-28T08:00:00Z',
            end: '2026-11-28T22:33:06.952Z',
          },
          {
            id: 2,
            name: 'Monday maintenance',
            active: false,
            start: '2026-11-30T13:00:00Z',
            end: '2026-11-30T17:00:00Z',
            kind: 'recurring',
            weekdays: [1],
            start_time: '08:00',
            end_time: '12:00',
            time_zone: 'America/New_York',
          },
        ],
      }),
    );
    assert.match(text, /## Freezes that would apply\n\n- ❄ Frozen by "Quarter close" until /);
    assert.match(text, /- Freeze "Monday maintenance", every Monday 08:00–12:00 .*; next from /);
    assert.doesNotMatch(text, /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/, 'no ISO time');
    assert.match(previewMarkdown(p), /## Freezes that would apply\n\nNone in force or starting within 7 days\./);
  });

  it('names a check once when its label is its name', () => {
    const text = previewMarkdown(
      preview.parse({ ...p, checks: [{ ...p.checks[0]!, name: 'ci/build', label: 'ci/build' }] }),
    );
    assert.match(text, /^- \*\*ci\/build\*\*: required;/m);
    assert.doesNotMatch(text, /\(ci\/build\)/);
  });

  it('says what would block, which policies govern (evaluating ones marked with what they would block on) and which checks it needs', () => {
    const text = previewMarkdown(p);
    assert.match(text, /^# Preview: branch edge-\\\*fra1\\\*$/m, 'names are escaped');
    assert.match(
      text,
      /## What would block a change request\n\n- Rule "netops" of policy "Devices" has 0 of 1 required approval\.\n- Required check "CI build" waits for a report\./,
    );
    assert.match(text, /- Rule \*\*netops\*\*: 1 approval from Alice, group noc \\\(empty\\\)/);
    assert.match(
      text,
      /### Trial \(evaluating: never blocks\)\n\n- No approval rules\.\n\nWould block: Rule "security" of policy "Trial" has 0 of 1 required approval\./,
    );
    assert.match(
      text,
      /- \*\*CI build\*\* \(ci\/build\): required; reported from outside; only its declared reporter may report it; fails if not reported within 30 min/,
    );
  });
});

describe('extension: preview documents', () => {
  it('name the branch in a path that gives its id back, and nothing else parses', () => {
    const path = previewDocumentPath(12, 'edge/routers: "R5"');
    assert.equal(path, '/12/Policies for edge_routers_ _R5_.md');
    assert.equal(branchOfPreviewPath(path), 12);
    assert.equal(branchOfPreviewPath(previewDocumentPath(3, '   ')), 3);
    for (const bad of ['/0/x.md', '/12/x.yaml', '/12/a/b.md', '12/x.md', '/-1/x.md', '/1e3/x.md'])
      assert.equal(branchOfPreviewPath(bad), null, bad);
  });
});
