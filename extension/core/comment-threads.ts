// The comment threads of a change request as the editor's gutter shows them: each thread on the
// document of its change, on the line of the attribute it is anchored to (the first line when it
// names none), with its posted comments and the caller's pending drafts; outdated threads marked,
// never dropped; threads whose change is gone listed apart. Plain data: the VS Code adapter
// (extension/vscode/comments.ts) turns it into CommentThreads. No VS Code here.
import type { ChangeDiff } from '../../contract/api/branching';
import type { ChangeComment } from '../../contract/api/change-control';
import { groupThreads } from '../../contract/threads';
import {
  attributeSpans,
  lineOfAttribute,
  serializeState,
  sideState,
  threadSide,
  type AttributeSpan,
  type ChangeSide,
} from './change-documents';
import type { DraftComment } from './pending-review';
import { suggestionContext, suggestionMarkdown } from './suggestions';

export interface CommentView {
  /** `c:<id>` for a posted comment, `d:<key>` for a draft. */
  key: string;
  id: number | null;
  draftKey: string | null;
  author: string;
  /** Markdown source. */
  text: string;
  timestamp: string;
  mine: boolean;
  pending: boolean;
  /** Shown next to the author ("Pending", "(edited)"). */
  label: string | undefined;
  /** `comment;` then `mine;`, `pending;` / `posted;`, and `suggestion;` with `applicable;`, `applied;` or `outdated;` (menus read it). */
  contextValue: string;
  /** The suggested change the comment carries, as Markdown (a diff of its attribute), shown under its text. */
  suggestion?: string | null;
}

export interface ThreadView {
  /** `c:<root id>` for a posted thread, `d:<key>` for a thread whose first comment is a draft. */
  key: string;
  rootId: number | null;
  rootDraft: string | null;
  changeDiff: number | null;
  attribute: string | null;
  resolved: boolean;
  outdated: boolean;
  pending: boolean;
  /** Where it shows; null when its change is no longer in the branch. */
  place: { change: ChangeDiff; side: ChangeSide; line: number; exact: boolean } | null;
  label: string;
  /** `thread;` then `open;` or `resolved;`, and `outdated;`, `pending;`, `posted;` as they apply. */
  contextValue: string;
  comments: CommentView[];
}

export interface ThreadInput {
  comments: readonly ChangeComment[];
  drafts: readonly DraftComment[];
  changes: readonly ChangeDiff[];
  me: { id: number; display: string };
  /** The request lets the user apply suggestions (its `actions.apply_suggestions`). */
  canApply?: boolean;
}

function postedView(c: ChangeComment, meId: number, canApply = false): CommentView {
  const mine = c.author.id === meId;
  return {
    key: `c:${c.id}`,
    id: c.id,
    draftKey: null,
    author: c.author.display || c.author.username,
    text: c.text,
    timestamp: c.created,
    mine,
    pending: false,
    // The widget shows the label beside the author, as it shows "Pending".
    label: c.edited ? '(edited)' : undefined,
    contextValue: `comment;${mine ? 'mine;' : ''}posted;${suggestionContext(c, canApply)}`,
    suggestion: c.suggestion ? suggestionMarkdown(c.suggestion) : null,
  };
}

function draftView(d: DraftComment, me: ThreadInput['me']): CommentView {
  return {
    key: `d:${d.key}`,
    id: null,
    draftKey: d.key,
    author: me.display,
    text: d.text,
    timestamp: d.created,
    mine: true,
    pending: true,
    label: 'Pending',
    contextValue: 'comment;mine;pending;',
  };
}

/** Words next to a thread: what it is about and its state. */
export function threadLabel(
  t: Pick<ThreadView, 'attribute' | 'resolved' | 'outdated' | 'pending'> & { exact: boolean; gone: boolean },
): string {
  const parts = [t.attribute ? t.attribute : 'Whole object'];
  if (t.attribute && !t.exact && !t.gone) parts[0] += ' (not in this version)';
  if (t.gone) parts.push('Outdated: the change is no longer in the branch');
  else if (t.outdated) parts.push('Outdated: no longer changed');
  if (t.resolved) parts.push('Resolved');
  if (t.pending) parts.push('Pending');
  return parts.join(' · ');
}

/** Every thread of a request with its placement; posted threads in the order they were opened, then new pending ones. */
export function buildThreads(input: ThreadInput): ThreadView[] {
  const changes = new Map(input.changes.map((c) => [c.id, c]));
  const spans = new Map<string, AttributeSpan[]>();
  const spansOf = (change: ChangeDiff, side: ChangeSide) => {
    const key = `${change.id}:${side}`;
    let s = spans.get(key);
    if (!s) {
      s = attributeSpans(serializeState(sideState(change, side)));
      spans.set(key, s);
    }
    return s;
  };
  const place = (changeDiff: number | null, attribute: string | null): ThreadView['place'] => {
    const change = changeDiff === null ? undefined : changes.get(changeDiff);
    if (!change) return null;
    const side = threadSide(change, attribute);
    const { line, exact } = lineOfAttribute(spansOf(change, side), attribute);
    return { change, side, line, exact };
  };

  const draftReplies = new Map<string, DraftComment[]>();
  for (const d of input.drafts) {
    const parentKey = d.parentDraft !== null ? `d:${d.parentDraft}` : d.parent !== null ? `c:${d.parent}` : null;
    if (parentKey) draftReplies.set(parentKey, [...(draftReplies.get(parentKey) ?? []), d]);
  }

  const threads: ThreadView[] = [];
  const finish = (t: Omit<ThreadView, 'label' | 'contextValue'>): ThreadView => {
    const exact = t.place?.exact ?? true;
    const flags = [
      t.resolved ? 'resolved' : 'open',
      t.outdated || !t.place ? 'outdated' : '',
      t.pending ? 'pending' : 'posted',
    ].filter((f) => f);
    return { ...t, label: threadLabel({ ...t, exact, gone: !t.place }), contextValue: `thread;${flags.join(';')};` };
  };
  for (const { root, replies } of groupThreads(input.comments)) {
    const key = `c:${root.id}`;
    const comments = [root, ...replies].map((c) => postedView(c, input.me.id, input.canApply));
    for (const d of draftReplies.get(key) ?? []) comments.push(draftView(d, input.me));
    threads.push(
      finish({
        key,
        rootId: root.id,
        rootDraft: null,
        changeDiff: root.change_diff,
        attribute: root.attribute,
        resolved: root.resolved,
        outdated: root.outdated,
        pending: false,
        place: place(root.change_diff, root.attribute),
        comments,
      }),
    );
  }
  for (const d of input.drafts) {
    if (d.parent !== null || d.parentDraft !== null) continue;
    const key = `d:${d.key}`;
    const comments = [draftView(d, input.me), ...(draftReplies.get(key) ?? []).map((r) => draftView(r, input.me))];
    threads.push(
      finish({
        key,
        rootId: null,
        rootDraft: d.key,
        changeDiff: d.changeDiff,
        attribute: d.attribute,
        resolved: false,
        outdated: false,
        pending: true,
        place: place(d.changeDiff, d.attribute),
        comments,
      }),
    );
  }
  return threads;
}

/** Open (unresolved) posted threads per change id, for the Changed Objects tree. */
export function openThreadCounts(
  comments: readonly Pick<ChangeComment, 'parent' | 'resolved' | 'change_diff'>[],
): Map<number, number> {
  const counts = new Map<number, number>();
  for (const c of comments) {
    if (c.parent !== null || c.resolved || c.change_diff === null) continue;
    counts.set(c.change_diff, (counts.get(c.change_diff) ?? 0) + 1);
  }
  return counts;
}
