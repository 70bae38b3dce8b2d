// A comment thread: its comments (Markdown), replies, edit and delete for one's own comments,
// resolve and reopen, and the marks that say where it is anchored and whether it is outdated.
import type { ChangeComment } from '../../contract/api/change-control';
import { renderMarkdown } from '../markdown';
import type { ChangeRequestSnapshot } from '../../contract/webview/protocol';
import { applyKey, deleteKey, editKey, isPending, replyKey, resolveKey, type ViewState } from '../state';
import { isApplicableSuggestion, type Thread } from '../../contract/threads';
import { renderDiffLines } from './diff-lines';
import { diffValues } from '../diff';
import { renderComposer } from './composer';
import { h, timeEl } from './dom';

export interface ThreadContext {
  snap: ChangeRequestSnapshot;
  state: ViewState;
  now: number;
  /** The thread's change is in the branch (replies are possible). */
  anchored: boolean;
  /** Say which attribute the thread is on (when it does not sit under that attribute's row). */
  showAttribute: boolean;
}

/**
 * A suggested change under its comment: the attribute's value it replaces and the one it
 * proposes, as the changes show a diff; whether it is applied or outdated; Apply for those who
 * may write the branch.
 */
function renderSuggestion(doc: Document, ctx: ThreadContext, c: ChangeComment): HTMLElement | null {
  const s = c.suggestion;
  if (!s) return null;
  const allowed = ctx.snap.changeRequest.actions.apply_suggestions?.allowed === true;
  const applying = isPending(ctx.state, applyKey(c.id));
  const state = s.applied_at
    ? h(doc, 'span', { class: 'mark applied' }, `✓ Applied${s.applied_by ? ` by ${s.applied_by.display}` : ''}`)
    : s.outdated
      ? h(
          doc,
          'span',
          { class: 'mark outdated', title: 'The attribute changed in the branch since it was suggested.' },
          'Outdated',
        )
      : null;
  return h(
    doc,
    'div',
    { class: `suggestion${s.outdated ? ' outdated' : ''}${s.applied_at ? ' applied' : ''}`, 'data-suggestion': c.id },
    h(
      doc,
      'p',
      { class: 'suggestion-head' },
      h(doc, 'strong', {}, 'Suggested change'),
      ' to ',
      h(doc, 'code', {}, s.attribute),
      ' ',
      state,
    ),
    renderDiffLines(doc, diffValues(s.previous_absent ? undefined : s.previous, s.value), false),
    ctx.state.errors[applyKey(c.id)]
      ? h(doc, 'p', { class: 'error', role: 'alert' }, ctx.state.errors[applyKey(c.id)])
      : null,
    isApplicableSuggestion(c, allowed) && ctx.anchored
      ? h(
          doc,
          'div',
          { class: 'buttons' },
          h(
            doc,
            'button',
            {
              type: 'button',
              class: 'primary',
              'data-act': 'apply-suggestions',
              'data-comments': String(c.id),
              'data-key': applyKey(c.id),
              disabled: applying,
              'aria-label': `Apply the suggestion for ${s.attribute}`,
            },
            applying ? 'Applying…' : 'Apply suggestion',
          ),
        )
      : null,
  );
}

function renderComment(doc: Document, ctx: ThreadContext, c: ChangeComment, isRoot: boolean): HTMLElement {
  const { snap, state } = ctx;
  const own = c.author.id === snap.me.id;
  const editing = state.openComposers.includes(editKey(c.id));
  const body = editing
    ? renderComposer(doc, state, editKey(c.id), { label: 'Edit your comment', sendLabel: 'Save' })
    : renderMarkdown(doc, c.text);
  const deleting = isPending(state, deleteKey(c.id));
  return h(
    doc,
    'div',
    { class: `comment${isRoot ? ' root' : ' reply'}`, id: `comment-${c.id}`, 'data-comment-id': c.id },
    h(
      doc,
      'div',
      { class: 'comment-head' },
      h(doc, 'strong', {}, c.author.display),
      ' ',
      timeEl(doc, c.created, ctx.now),
      c.edited ? h(doc, 'span', { class: 'muted' }, ' (edited)') : null,
    ),
    body,
    editing ? null : renderSuggestion(doc, ctx, c),
    state.errors[deleteKey(c.id)]
      ? h(doc, 'p', { class: 'error', role: 'alert' }, state.errors[deleteKey(c.id)])
      : null,
    own && !editing
      ? h(
          doc,
          'div',
          { class: 'buttons' },
          h(
            doc,
            'button',
            {
              type: 'button',
              class: 'link',
              'data-act': 'open-composer',
              'data-key': editKey(c.id),
              'data-text': c.text,
              'aria-label': `Edit comment by ${c.author.display}`,
            },
            'Edit',
          ),
          h(
            doc,
            'button',
            {
              type: 'button',
              class: 'link',
              'data-act': 'delete-comment',
              'data-comment': c.id,
              disabled: deleting,
              'aria-label': `Delete comment by ${c.author.display}`,
            },
            deleting ? 'Deleting…' : 'Delete',
          ),
        )
      : null,
  );
}

export function renderThread(doc: Document, ctx: ThreadContext, thread: Thread): HTMLElement {
  const { snap, state } = ctx;
  const { root } = thread;
  const replying = state.openComposers.includes(replyKey(root.id));
  const resolving = isPending(state, resolveKey(root.id));
  const canComment = snap.changeRequest.actions.comment?.allowed === true;
  const where = root.attribute ? ` on ${root.attribute}` : '';
  const marks = [
    root.resolved ? h(doc, 'span', { class: 'mark resolved-note' }, '✓ Resolved') : null,
    root.outdated
      ? h(
          doc,
          'span',
          {
            class: 'mark outdated',
            title: 'The attribute this thread is on no longer differs, or its change is gone.',
          },
          'Outdated',
        )
      : null,
    ctx.showAttribute && root.attribute
      ? h(doc, 'span', { class: 'mark attribute' }, h(doc, 'code', {}, root.attribute))
      : null,
  ].filter((m) => m !== null);
  return h(
    doc,
    'div',
    {
      class: `thread${root.resolved ? ' resolved' : ''}${root.outdated ? ' outdated' : ''}`,
      role: 'group',
      'aria-label': `Thread${where} started by ${root.author.display}${root.resolved ? ' (resolved)' : ''}${root.outdated ? ' (outdated)' : ''}`,
      'data-thread-id': root.id,
      'data-attribute': root.attribute ?? undefined,
    },
    marks.length ? h(doc, 'p', { class: 'thread-marks' }, marks) : null,
    renderComment(doc, ctx, root, true),
    thread.replies.map((r) => renderComment(doc, ctx, r, false)),
    replying
      ? renderComposer(doc, state, replyKey(root.id), { label: `Reply to ${root.author.display}`, sendLabel: 'Reply' })
      : null,
    state.errors[resolveKey(root.id)]
      ? h(doc, 'p', { class: 'error', role: 'alert' }, state.errors[resolveKey(root.id)])
      : null,
    h(
      doc,
      'div',
      { class: 'buttons thread-buttons' },
      !replying && ctx.anchored && canComment
        ? h(
            doc,
            'button',
            { type: 'button', class: 'secondary', 'data-act': 'open-composer', 'data-key': replyKey(root.id) },
            'Reply',
          )
        : null,
      h(
        doc,
        'button',
        {
          type: 'button',
          class: 'secondary',
          'data-act': 'resolve',
          'data-comment': root.id,
          'data-resolved': root.resolved ? 'false' : 'true',
          disabled: resolving,
        },
        root.resolved ? 'Reopen thread' : 'Resolve thread',
      ),
    ),
  );
}
