// What would govern a branch before a change request exists (GET preview/?branch_id=N), as a
// Markdown document: policies (evaluating ones marked), rules and who may approve, the checks a
// request would need, what would block it and the freezes that would apply. Shown rendered.
import type { Preview } from '../../contract/api/change-control';
import { freezePhrase } from '../../contract/labels';
import { exactTime, readableTimes } from '../../contract/time';

function md(text: string): string {
  return text.replace(/[\\`*_{}[\]<>()#+!|]/g, (c) => `\\${c}`);
}

export function previewMarkdown(p: Preview): string {
  const lines = [
    `# Preview: branch ${md(p.branch.name)}`,
    '',
    `Branch ${p.branch.status}; digest \`${p.digest.slice(0, 12)}\`.`,
    '',
  ];
  lines.push('## What would block a change request', '');
  if (p.reasons.length === 0) lines.push('Nothing: a request for this branch would be ready to merge.');
  for (const r of p.reasons) lines.push(`- ${md(readableTimes(r))}`);
  lines.push('', '## Freezes that would apply', '');
  if (p.freezes.length === 0) lines.push('None in force or starting within 7 days.');
  for (const f of p.freezes) lines.push(`- ${f.active ? '❄ ' : ''}${md(freezePhrase(f, (iso) => exactTime(iso)))}`);
  lines.push('', '## Policies', '');
  if (p.policies.length === 0) lines.push('No policy you can see would govern this branch.');
  for (const policy of p.policies) {
    const evaluating = policy.enforcement === 'evaluate';
    lines.push(`### ${md(policy.name)}${evaluating ? ' (evaluating: never blocks)' : ''}`, '');
    if (policy.matched_object_types.length) lines.push(`Matches: ${policy.matched_object_types.join(', ')}`, '');
    for (const rule of policy.rules) {
      const who = [
        ...rule.eligible_users.map((u) => u.display),
        ...rule.eligible_groups.map((g) => `group ${g.name}${g.empty ? ' (empty)' : ''}`),
      ];
      lines.push(
        `- Rule **${md(rule.name)}**: ${rule.min_reviews} approval${rule.min_reviews === 1 ? '' : 's'} from ${who.length ? md(who.join(', ')) : 'nobody'}`,
      );
    }
    if (policy.rules.length === 0) lines.push('- No approval rules.');
    if (policy.checks.length) lines.push(`- Checks: ${policy.checks.map(md).join(', ')}`);
    if (evaluating && policy.blocking_reasons.length)
      lines.push('', `Would block: ${md(policy.blocking_reasons.join(' '))}`);
    lines.push('');
  }
  lines.push('## Checks a request would need', '');
  if (p.checks.length === 0) lines.push('None.');
  for (const c of p.checks) {
    const notes = [
      c.required ? 'required' : 'advisory',
      c.registered ? 'computed by the service' : 'reported from outside',
    ];
    if (c.reporter_restricted) notes.push('only its declared reporter may report it');
    if (c.timeout_minutes !== null) notes.push(`fails if not reported within ${c.timeout_minutes} min`);
    // A check whose label is its name is named once.
    const named = c.label && c.label !== c.name ? `**${md(c.label)}** (${md(c.name)})` : `**${md(c.name)}**`;
    lines.push(`- ${named}: ${notes.join('; ')}`);
  }
  return `${lines.join('\n')}\n`;
}

/** The scheme of branch previews: read-only Markdown documents, one per branch. */
export const PREVIEW_SCHEME = 'change-control-preview';

/** A branch's preview document: `change-control-preview:/<branch id>/Policies for <branch name>.md` (its rendered tab: "Preview Policies for …"). */
export function previewDocumentPath(branchId: number, branchName: string): string {
  const label =
    branchName
      .replace(/[\u0000-\u001f\u007f/\\:*?"<>|]+/g, '_')
      .trim()
      .slice(0, 80) || `branch-${branchId}`;
  return `/${branchId}/Policies for ${label}.md`;
}

/** The branch id of a preview document's path, or null for any other path. */
export function branchOfPreviewPath(path: string): number | null {
  const m = /^\/([1-9][0-9]{0,15})\/[^/]+\.md$/.exec(path);
  return m ? Number(m[1]) : null;
}
