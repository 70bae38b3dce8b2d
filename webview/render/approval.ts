// The approval panel: per policy and rule, counted approvals of the minimum, who may approve
// (empty groups called out), who is still outstanding; stale reviews, rejections and reasons.
import type {
  ChangeRequestStatus,
  Evaluation,
  EvaluationRule,
  UncountedApprovalReason,
} from '../../contract/api/change-control';
import { approvalsPhrase, DECISION_VIEW } from '../../contract/labels';
import { renderMarkdown } from '../markdown';
import { h } from './dom';

function names(list: { display: string }[]): string {
  return list.map((u) => u.display).join(', ');
}

export const UNCOUNTED_REASON = {
  contributor: 'changed the branch',
  stale: "given on other changes than the branch's now",
  not_permitted: 'may no longer review this request',
} as const satisfies Record<UncountedApprovalReason, string>;

/**
 * Who a rule waits for, in the lists' words: a rule of a policy on trial awaits advisory reviews
 * (the reviewer's "Advisory reviews" list), an active one binding reviews ("Needs my review");
 * nobody is waited for on a draft or a closed request.
 */
function waitingLine(doc: Document, rule: EvaluationRule, trial: boolean, status: ChangeRequestStatus | null) {
  if (!rule.outstanding_reviewers.length) return null;
  if (status !== null && !['needs-review', 'approved', 'rejected'].includes(status)) return null;
  return trial
    ? h(doc, 'p', { class: 'waiting advisory' }, 'Advisory review awaited from: ', names(rule.outstanding_reviewers))
    : h(doc, 'p', { class: 'waiting' }, 'Waiting for: ', names(rule.outstanding_reviewers));
}

function renderRule(
  doc: Document,
  rule: EvaluationRule,
  trial = false,
  status: ChangeRequestStatus | null = null,
): HTMLElement {
  const uncounted = rule.uncounted_approvals ?? [];
  const groups = rule.eligible_groups.map((g) => (g.empty ? `${g.name} (empty group)` : g.name));
  const mayApprove = [...rule.eligible_users.map((u) => u.display), ...groups];
  return h(
    doc,
    'li',
    { class: `rule ${rule.satisfied ? 'satisfied' : 'short'}`, 'data-rule-id': rule.id },
    h(
      doc,
      'div',
      { class: 'rule-head' },
      h(doc, 'span', { class: 'symbol', 'aria-hidden': 'true' }, rule.satisfied ? '✓ ' : '○ '),
      h(doc, 'strong', {}, rule.name),
      h(doc, 'span', { class: 'count' }, ` ${approvalsPhrase(rule.approvals, rule.min_reviews)}`),
      h(doc, 'span', { class: 'visually-hidden' }, rule.satisfied ? ' (satisfied)' : ' (not satisfied)'),
    ),
    rule.approvers.length ? h(doc, 'p', {}, 'Approved by: ', names(rule.approvers)) : null,
    h(doc, 'p', {}, 'May approve: ', mayApprove.length ? mayApprove.join(', ') : 'nobody'),
    waitingLine(doc, rule, trial, status),
    uncounted.length
      ? h(
          doc,
          'ul',
          { class: 'uncounted' },
          uncounted.map((u) =>
            h(
              doc,
              'li',
              { 'data-review-id': u.review, title: u.detail || undefined },
              `${u.reviewer.display}: not counted: ${UNCOUNTED_REASON[u.reason] ?? u.reason}`,
              u.detail ? h(doc, 'span', { class: 'muted' }, ` (${u.detail})`) : null,
            ),
          ),
        )
      : null,
    ...rule.empty_groups.map((g) =>
      h(doc, 'p', { class: 'warning' }, `Group ${g} has no members and can never approve.`),
    ),
  );
}

export function renderApproval(
  doc: Document,
  evaluation: Evaluation | null,
  status: ChangeRequestStatus | null = null,
): HTMLElement {
  const section = h(
    doc,
    'section',
    { id: 'approval', 'aria-labelledby': 'approval-title' },
    h(doc, 'h2', { id: 'approval-title' }, 'Approval'),
  );
  const closed = status === 'completed' || status === 'abandoned';
  if (!evaluation) {
    section.append(h(doc, 'p', { class: 'muted' }, 'The approval panel could not be loaded.'));
    return section;
  }
  section.append(
    h(
      doc,
      'p',
      { class: evaluation.approved ? 'state ok' : closed ? 'state muted' : 'state blocked', id: 'approval-state' },
      evaluation.approved
        ? '✓ The policies are satisfied.'
        : closed
          ? `The policies were not satisfied when it was ${status}.`
          : 'The policies are not satisfied yet.',
    ),
  );
  if (evaluation.reasons.length) {
    section.append(
      h(
        doc,
        'ul',
        { class: 'reasons', id: 'approval-reasons' },
        evaluation.reasons.map((r) => h(doc, 'li', {}, r)),
      ),
    );
  }
  for (const policy of evaluation.policies) {
    section.append(
      h(
        doc,
        'div',
        { class: 'policy', 'data-policy-id': policy.id },
        h(
          doc,
          'h3',
          {},
          policy.name,
          policy.matched_object_types.length
            ? h(doc, 'span', { class: 'muted' }, ` (${policy.matched_object_types.join(', ')})`)
            : null,
          policy.enforcement === 'evaluate'
            ? h(
                doc,
                'span',
                { class: 'badge evaluating', title: 'Evaluated and shown, never blocking: its reviews are advisory' },
                ' on trial (advisory)',
              )
            : null,
        ),
        // What an evaluating policy would block on if it were active.
        policy.enforcement === 'evaluate' && policy.blocking_reasons.length
          ? h(doc, 'p', { class: 'would-block' }, 'Would block: ', policy.blocking_reasons.join(' '))
          : null,
        policy.rules.length
          ? h(
              doc,
              'ul',
              { class: 'rules' },
              policy.rules.map((r) => renderRule(doc, r, policy.enforcement === 'evaluate', status)),
            )
          : h(doc, 'p', { class: 'muted' }, 'No approval rules.'),
        policy.checks.length ? h(doc, 'p', { class: 'muted' }, 'Requires checks: ', policy.checks.join(', ')) : null,
      ),
    );
  }
  if (evaluation.stale_reviews.length) {
    section.append(
      h(
        doc,
        'div',
        { class: 'stale' },
        h(doc, 'h3', {}, 'Stale reviews'),
        h(doc, 'p', { class: 'muted' }, 'Given before the branch changed; they no longer count.'),
        h(
          doc,
          'ul',
          {},
          evaluation.stale_reviews.map((s) =>
            h(doc, 'li', {}, `${s.reviewer.display}: ${DECISION_VIEW[s.decision].label}`),
          ),
        ),
      ),
    );
  }
  if (evaluation.rejections.length) {
    section.append(
      h(
        doc,
        'div',
        { class: 'rejections' },
        h(doc, 'h3', {}, 'Changes requested'),
        evaluation.rejections.map((r) =>
          h(
            doc,
            'div',
            { class: 'rejection' },
            h(doc, 'strong', {}, r.reviewer.display),
            renderMarkdown(doc, r.comment),
          ),
        ),
      ),
    );
  }
  return section;
}
