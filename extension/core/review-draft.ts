// The review comment written in an editor (a Markdown document of its own, not a one-line input):
// the text it opens with, what of it is sent, and when it may be sent. No VS Code here.
import type { ReviewDecision } from '../../contract/api/change-control';
import { DECISION_VIEW } from '../../contract/labels';

/** The scheme of the documents review comments are written in. */
export const REVIEW_SCHEME = 'change-control-review';

/** The document's first lines: what to write and how to send it (a comment, never sent). */
export function reviewDraftTemplate(decision: ReviewDecision, title: string): string {
  const what =
    decision === 'reject' ? 'Write what must change (Markdown, required)' : 'Write your comment (Markdown, optional)';
  return `<!-- ${DECISION_VIEW[decision].label} on "${title.replace(/-->/g, '')}". ${what} below this line, then save (Ctrl+S) to send the review. Close without saving to cancel. -->\n\n`;
}

/** What is sent: the text without the guide it opened with (wherever the writing went), trimmed. */
export function reviewDraftText(document: string, template: string): string {
  const guide = template.trim();
  return (guide ? document.replace(guide, '') : document).trim();
}

/** Why the text cannot be sent as the review's comment, or null. */
export function reviewDraftProblem(decision: ReviewDecision, text: string): string | null {
  if (decision === 'reject' && !text) return 'Requesting changes needs a comment saying what must change.';
  return null;
}
