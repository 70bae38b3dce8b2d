// One changed object of the list: its title line (action, name, type, open threads, Open in Diff
// Editor, fold), and unless folded, per attribute a line diff with the changed characters
// highlighted, main's value now where it moved, and the threads anchored to that attribute;
// then the threads on the whole object and a composer for a new one.
import type { ChangeDiff } from '../../contract/api/branching';
import { CHANGE_ACTION_LABEL } from '../../contract/labels';
import {
  attributeRows,
  diffValues,
  formatValue,
  isMultiLine,
  valueText,
  type AttributeRow,
  type DiffRow,
} from '../diff';
import type { ChangeRequestSnapshot } from '../../contract/webview/protocol';
import { newThreadKey, type ViewState } from '../state';
import type { Thread } from '../../contract/threads';
import { openThreadCount, placeThreads } from '../threads';
import { renderComposer } from './composer';
import { domId, h } from './dom';
import { renderDiffLines } from './diff-lines';
import { renderThread, type ThreadContext } from './thread';

export { renderDiffLines };

export interface ChangeItemContext {
  snap: ChangeRequestSnapshot;
  state: ViewState;
  now: number;
  /** Position in the listed changes (1-based) and their number, for assistive technology. */
  position: number;
  count: number;
}

// Diffs are computed once per change object and attribute (a refresh keeps unchanged change objects).
const diffCache = new WeakMap<ChangeDiff, Map<string, DiffRow[]>>();

export function attributeDiff(change: ChangeDiff, row: AttributeRow): DiffRow[] {
  let perChange = diffCache.get(change);
  if (!perChange) diffCache.set(change, (perChange = new Map()));
  let rows = perChange.get(row.name);
  if (!rows) perChange.set(row.name, (rows = diffValues(row.original, row.modified)));
  return rows;
}

function renderAttribute(
  doc: Document,
  ctx: ChangeItemContext,
  change: ChangeDiff,
  row: AttributeRow,
  threads: Thread[],
  threadCtx: ThreadContext,
): HTMLElement {
  const { state } = ctx;
  const key = newThreadKey(change.id, row.name);
  const composing = state.openComposers.includes(key);
  const canComment = ctx.snap.changeRequest.actions.comment?.allowed === true;
  const numbered = row.changed && (isMultiLine(row.original) || isMultiLine(row.modified));
  const value = row.changed
    ? renderDiffLines(doc, attributeDiff(change, row), numbered)
    : h(
        doc,
        'div',
        { class: 'lines' },
        h(
          doc,
          'div',
          { class: 'line context value' },
          h(doc, 'span', { class: 'sign', 'aria-hidden': 'true' }, ' '),
          h(doc, 'span', {}, valueText(row.modified ?? row.original) ?? '—'),
        ),
      );
  return h(
    doc,
    'div',
    {
      class: `attr${row.changed ? ' changed' : ''}${row.conflict ? ' conflict' : ''}`,
      'data-attr': row.name,
      role: 'group',
      'aria-label': `${row.name}${row.changed ? ' (changed)' : ''}${row.conflict ? ' (conflicts with main)' : ''}`,
    },
    h(
      doc,
      'div',
      { class: 'attr-head' },
      h(doc, 'code', { class: 'attr-name' }, row.name),
      row.conflict ? h(doc, 'span', { class: 'conflict-mark' }, '⚠ conflict') : null,
      canComment && !composing
        ? h(
            doc,
            'button',
            {
              type: 'button',
              class: 'link attr-comment',
              'data-act': 'open-composer',
              'data-key': key,
              id: `comment-on-${domId(`${change.id}:${row.name}`)}`,
              'aria-label': `Comment on ${row.name} of ${change.object_repr}`,
            },
            'Comment',
          )
        : null,
    ),
    value,
    row.mainMoved || row.conflict
      ? h(
          doc,
          'p',
          { class: `current${row.mainMoved ? ' moved' : ''}` },
          h(doc, 'span', { class: 'muted' }, 'Main now: '),
          formatValue(row.current),
        )
      : null,
    threads.length
      ? h(
          doc,
          'div',
          { class: 'threads' },
          threads.map((t) => renderThread(doc, threadCtx, t)),
        )
      : null,
    composing
      ? renderComposer(doc, state, key, {
          label: `Comment on ${row.name} of ${change.object_repr}`,
          sendLabel: 'Comment',
        })
      : null,
  );
}

export function renderChangeItem(
  doc: Document,
  ctx: ChangeItemContext,
  change: ChangeDiff,
  threads: Thread[],
): HTMLElement {
  const { state, snap } = ctx;
  const collapsed = state.collapsedChanges.includes(change.id);
  const all = state.expandedChanges.includes(change.id);
  const conflicts = change.conflicts ?? [];
  const open = openThreadCount(threads);
  const titleId = `change-${change.id}-title`;
  const bodyId = `change-${change.id}-body`;
  const head = h(
    doc,
    'div',
    { class: 'change-head' },
    h(
      doc,
      'h3',
      { id: titleId },
      h(
        doc,
        'button',
        {
          type: 'button',
          class: 'twisty',
          id: `toggle-${change.id}`,
          'data-act': 'toggle-collapse',
          'data-change': change.id,
          'aria-expanded': collapsed ? 'false' : 'true',
          'aria-controls': collapsed ? undefined : bodyId,
        },
        h(doc, 'span', { class: 'chevron', 'aria-hidden': 'true' }, collapsed ? '▸' : '▾'),
        h(doc, 'span', { class: `badge action-${change.action}` }, CHANGE_ACTION_LABEL[change.action]),
        ' ',
        h(doc, 'span', { class: 'repr' }, change.object_repr),
        ' ',
        h(doc, 'span', { class: 'muted type' }, change.object_type),
      ),
    ),
    h(
      doc,
      'span',
      { class: 'change-marks' },
      conflicts.length
        ? h(
            doc,
            'span',
            { class: 'conflict-mark', title: `Conflicts with main: ${conflicts.join(', ')}` },
            '⚠',
            h(doc, 'span', { class: 'visually-hidden' }, ' conflicts'),
          )
        : null,
      open
        ? h(
            doc,
            'span',
            { class: 'thread-count', title: `${open} open thread${open === 1 ? '' : 's'}` },
            `${open} open`,
            h(doc, 'span', { class: 'visually-hidden' }, ` thread${open === 1 ? '' : 's'}`),
          )
        : null,
    ),
    h(
      doc,
      'button',
      {
        type: 'button',
        class: 'link open-diff',
        'data-act': 'open-diff',
        'data-change': change.id,
        'aria-label': `Open ${change.object_repr} in the diff editor`,
      },
      'Open in Diff Editor',
    ),
  );
  const article = h(
    doc,
    'article',
    {
      class: `change action-${change.action}${conflicts.length ? ' has-conflicts' : ''}${collapsed ? ' collapsed' : ''}`,
      id: `change-${change.id}`,
      'data-change-id': change.id,
      'data-key': String(change.id),
      'aria-labelledby': titleId,
      'aria-posinset': ctx.position,
      'aria-setsize': ctx.count,
      tabindex: -1,
    },
    head,
  );
  if (collapsed) return article;

  const rows = attributeRows(change, all);
  const placement = placeThreads(
    threads,
    rows.map((r) => r.name),
  );
  const threadCtx: ThreadContext = { snap, state, now: ctx.now, anchored: true, showAttribute: false };
  const composing = state.openComposers.includes(newThreadKey(change.id));
  const canComment = snap.changeRequest.actions.comment?.allowed === true;
  article.append(
    h(
      doc,
      'div',
      { class: 'change-body', id: bodyId },
      conflicts.length ? h(doc, 'p', { class: 'warning' }, `⚠ Conflicts with main: ${conflicts.join(', ')}`) : null,
      rows.length
        ? h(
            doc,
            'div',
            { class: 'attrs' },
            rows.map((r) => renderAttribute(doc, ctx, change, r, placement.byAttribute.get(r.name) ?? [], threadCtx)),
          )
        : h(doc, 'p', { class: 'muted' }, all ? 'No attributes.' : 'No attribute differs.'),
      h(
        doc,
        'button',
        {
          type: 'button',
          class: 'link',
          'data-act': 'toggle-attrs',
          'data-change': change.id,
          'aria-expanded': all ? 'true' : 'false',
        },
        all ? 'Show changed attributes only' : 'Show all attributes',
      ),
      placement.object.length
        ? h(
            doc,
            'div',
            { class: 'threads object-threads', role: 'group', 'aria-label': `Comments on ${change.object_repr}` },
            placement.object.map((t) => renderThread(doc, { ...threadCtx, showAttribute: true }, t)),
          )
        : null,
      composing
        ? renderComposer(doc, state, newThreadKey(change.id), {
            label: `Comment on ${change.object_repr}`,
            sendLabel: 'Comment',
          })
        : canComment
          ? h(
              doc,
              'button',
              {
                type: 'button',
                class: 'secondary',
                'data-act': 'open-composer',
                'data-key': newThreadKey(change.id),
                id: `comment-on-${change.id}`,
              },
              'Comment on this change',
            )
          : null,
    ),
  );
  return article;
}

/** A guess of a change's rendered height in pixels before it is measured: its title line, and unless folded its diff lines and threads. */
export function estimateChangeHeight(collapsed: boolean, diffLines: number, threads: number): number {
  if (collapsed) return 40;
  return 40 + 30 + diffLines * 20 + threads * 110 + 40;
}
