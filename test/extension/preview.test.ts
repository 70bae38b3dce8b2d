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
    assert.equal(path, '/12/Preview of edge_routers_ _R5_.md');
    assert.equal(branchOfPreviewPath(path), 12);
    assert.equal(branchOfPreviewPath(previewDocumentPath(3, '   ')), 3);
    for (const bad of ['/0/x.md', '/12/x.yaml', '/12/a/b.md', '12/x.md', '/-1/x.md', '/1e3/x.md'])
      assert.equal(branchOfPreviewPath(bad), null, bad);
  });
});
