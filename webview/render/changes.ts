// The Changes list: per changed object an attribute diff (original, modified, current) with
// conflicts marked, and the comment threads anchored to it.
import type { ChangeDiff } from '../../server/contract/branching';
import type { ChangeComment } from '../../server/contract/change-control';
import { CHANGE_ACTION_LABEL } from '../../extension/core/labels';
import { attributeRows, formatValue } from '../diff';
import { renderMarkdown } from '../markdown';
import type { ChangeRequestSnapshot } from '../protocol';
import { deleteKey, editKey, isPending, newThreadKey, replyKey, resolveKey, threadsByChange, type Thread, type ViewState } from '../state';
import { renderComposer } from './composer';
import { formatTime, h } from './dom';

function canComment(snap: ChangeRequestSnapshot): boolean {
  return snap.changeRequest.actions.comment?.allowed === true;
}

function renderComment(doc: Document, snap: ChangeRequestSnapshot, state: ViewState, c: ChangeComment, isRoot: boolean): HTMLElement {
  const own = c.author.id === snap.me.id;
  const editing = state.openComposers.includes(editKey(c.id));
  const body = editing
    ? renderComposer(doc, state, editKey(c.id), { label: 'Edit your comment', sendLabel: 'Save' })
    : renderMarkdown(doc, c.text);
  const deleting = isPending(state, deleteKey(c.id));
  return h(doc, 'div', { class: `comment${isRoot ? ' root' : ' reply'}`, id: `comment-${c.id}`, 'data-comment-id': c.id },
    h(doc, 'div', { class: 'comment-head' },
      h(doc, 'strong', {}, c.author.display),
      h(doc, 'span', { class: 'muted' }, ` ${formatTime(c.created)}`),
      c.last_updated !== c.created ? h(doc, 'span', { class: 'muted' }, ' (edited)') : null,
    ),
    body,
    state.errors[deleteKey(c.id)] ? h(doc, 'p', { class: 'error', role: 'alert' }, state.errors[deleteKey(c.id)]) : null,
    own && !editing
      ? h(doc, 'div', { class: 'buttons' },
          h(doc, 'button', { type: 'button', class: 'link', 'data-act': 'open-composer', 'data-key': editKey(c.id), 'data-text': c.text, 'aria-label': `Edit comment by ${c.author.display}` }, 'Edit'),
          h(doc, 'button', { type: 'button', class: 'link', 'data-act': 'delete-comment', 'data-comment': c.id, disabled: deleting, 'aria-label': `Delete comment by ${c.author.display}` }, deleting ? 'Deleting…' : 'Delete'),
        )
      : null,
  );
}

export function renderThread(doc: Document, snap: ChangeRequestSnapshot, state: ViewState, thread: Thread): HTMLElement {
  const { root } = thread;
  const replying = state.openComposers.includes(replyKey(root.id));
  const anchored = root.change_diff !== null && snap.changes.some((c) => c.id === root.change_diff);
  const resolving = isPending(state, resolveKey(root.id));
  return h(doc, 'div', { class: `thread${root.resolved ? ' resolved' : ''}`, role: 'group', 'aria-label': `Thread started by ${root.author.display}${root.resolved ? ' (resolved)' : ''}`, 'data-thread-id': root.id },
    root.resolved ? h(doc, 'p', { class: 'muted resolved-note' }, '✓ Resolved') : null,
    renderComment(doc, snap, state, root, true),
    thread.replies.map((r) => renderComment(doc, snap, state, r, false)),
    replying ? renderComposer(doc, state, replyKey(root.id), { label: `Reply to ${root.author.display}`, sendLabel: 'Reply' }) : null,
    state.errors[resolveKey(root.id)] ? h(doc, 'p', { class: 'error', role: 'alert' }, state.errors[resolveKey(root.id)]) : null,
    h(doc, 'div', { class: 'buttons thread-buttons' },
      !replying && anchored && canComment(snap) ? h(doc, 'button', { type: 'button', class: 'secondary', 'data-act': 'open-composer', 'data-key': replyKey(root.id) }, 'Reply') : null,
      h(doc, 'button', { type: 'button', class: 'secondary', 'data-act': 'resolve', 'data-comment': root.id, 'data-resolved': root.resolved ? 'false' : 'true', disabled: resolving }, root.resolved ? 'Reopen thread' : 'Resolve thread'),
    ),
  );
}

function renderDiffTable(doc: Document, change: ChangeDiff, all: boolean): HTMLElement {
  const rows = attributeRows(change, all);
  if (rows.length === 0) return h(doc, 'p', { class: 'muted' }, all ? 'No attributes.' : 'No attribute differs.');
  return h(doc, 'table', { class: 'diff' },
    h(doc, 'caption', { class: 'visually-hidden' }, `Attributes of ${change.object_repr}`),
    h(doc, 'thead', {}, h(doc, 'tr', {}, ['Attribute', 'Main at branch start', 'Branch', 'Main now'].map((t) => h(doc, 'th', { scope: 'col' }, t)))),
    h(doc, 'tbody', {},
      rows.map((r) =>
        h(doc, 'tr', { class: [r.changed ? 'changed' : '', r.conflict ? 'conflict' : ''].filter(Boolean).join(' ') || undefined, 'data-attr': r.name },
          h(doc, 'th', { scope: 'row' }, r.name, r.conflict ? h(doc, 'span', { class: 'conflict-mark' }, ' ⚠ conflict') : null),
          h(doc, 'td', { class: r.original === undefined ? 'original absent' : 'original' }, formatValue(r.original)),
          h(doc, 'td', { class: r.modified === undefined ? 'modified absent' : 'modified' }, formatValue(r.modified)),
          h(doc, 'td', { class: r.mainMoved ? 'current moved' : 'current' }, formatValue(r.current)),
        ),
      ),
    ),
  );
}

function renderChange(doc: Document, snap: ChangeRequestSnapshot, state: ViewState, change: ChangeDiff, threads: Thread[]): HTMLElement {
  const all = state.expandedChanges.includes(change.id);
  const composing = state.openComposers.includes(newThreadKey(change.id));
  const conflicts = change.conflicts ?? [];
  return h(doc, 'article', { class: `change action-${change.action}${conflicts.length ? ' has-conflicts' : ''}`, id: `change-${change.id}`, 'data-change-id': change.id, 'aria-labelledby': `change-${change.id}-title` },
    h(doc, 'h3', { id: `change-${change.id}-title` },
      h(doc, 'span', { class: `badge action-${change.action}` }, CHANGE_ACTION_LABEL[change.action]),
      ` ${change.object_repr} `,
      h(doc, 'span', { class: 'muted' }, change.object_type),
    ),
    conflicts.length ? h(doc, 'p', { class: 'warning' }, `⚠ Conflicts with main: ${conflicts.join(', ')}`) : null,
    renderDiffTable(doc, change, all),
    h(doc, 'button', { type: 'button', class: 'link', 'data-act': 'toggle-attrs', 'data-change': change.id, 'aria-expanded': all ? 'true' : 'false' }, all ? 'Show changed attributes only' : 'Show all attributes'),
    h(doc, 'div', { class: 'threads', 'aria-label': `Comments on ${change.object_repr}` }, threads.map((t) => renderThread(doc, snap, state, t))),
    composing
      ? renderComposer(doc, state, newThreadKey(change.id), { label: `Comment on ${change.object_repr}`, sendLabel: 'Comment' })
      : canComment(snap)
        ? h(doc, 'button', { type: 'button', class: 'secondary', 'data-act': 'open-composer', 'data-key': newThreadKey(change.id), id: `comment-on-${change.id}` }, 'Comment on this change')
        : null,
  );
}

export function renderChanges(doc: Document, snap: ChangeRequestSnapshot, state: ViewState): HTMLElement {
  const threads = threadsByChange(snap.comments);
  const section = h(doc, 'section', { id: 'changes', 'aria-labelledby': 'changes-title' }, h(doc, 'h2', { id: 'changes-title' }, `Changes (${snap.changes.length})`));
  if (snap.changeRequest.branch_deleted) section.append(h(doc, 'p', { class: 'muted' }, 'The branch is deleted; its changes are no longer available.'));
  else if (snap.changes.length === 0) section.append(h(doc, 'p', { class: 'muted' }, 'The branch has no changes.'));
  const known = new Set(snap.changes.map((c) => c.id));
  for (const change of snap.changes) section.append(renderChange(doc, snap, state, change, threads.get(change.id) ?? []));

  const orphans = [...threads.entries()].filter(([changeId]) => changeId === null || !known.has(changeId)).flatMap(([, list]) => list);
  if (orphans.length) {
    section.append(
      h(doc, 'div', { class: 'orphans', id: 'earlier-comments' },
        h(doc, 'h3', {}, 'Comments on changes no longer in the branch'),
        orphans.map((t) => h(doc, 'div', { class: 'orphan' }, h(doc, 'p', { class: 'muted' }, t.root.change_label), renderThread(doc, snap, state, t))),
      ),
    );
  }
  return section;
}
