// The lines of a value's diff (removed, added, unchanged context, folded gaps), with the changed
// characters marked: under a changed attribute, and under a suggested change.
import type { DiffRow, Segment } from '../diff';
import { h } from './dom';

function renderSegments(doc: Document, segments: Segment[]): (Node | string)[] {
  if (segments.length === 1 && !segments[0]!.changed) return [segments[0]!.text];
  return segments.map((s) => (s.changed ? h(doc, 'span', { class: 'ch' }, s.text) : s.text));
}

/** The diff lines of one attribute: removed and added lines (del/ins), unchanged context, and folded gaps. */
export function renderDiffLines(doc: Document, rows: DiffRow[], numbered: boolean): HTMLElement {
  return h(
    doc,
    'div',
    { class: `lines${numbered ? ' numbered' : ''}` },
    rows.map((r) => {
      if (r.kind === 'gap')
        return h(doc, 'div', { class: 'line gap' }, `⋯ ${r.count} unchanged line${r.count === 1 ? '' : 's'}`);
      const no = numbered
        ? h(doc, 'span', { class: 'ln', 'aria-hidden': 'true' }, String(r.kind === 'removed' ? r.oldNo : r.newNo))
        : null;
      const text =
        r.segments.length === 1 && r.segments[0]!.text === ''
          ? [h(doc, 'span', { class: 'muted' }, '(empty)')]
          : renderSegments(doc, r.segments);
      if (r.kind === 'removed')
        return h(
          doc,
          'div',
          { class: 'line removed original' },
          no,
          h(doc, 'span', { class: 'sign', 'aria-hidden': 'true' }, '−'),
          h(doc, 'del', {}, text),
        );
      if (r.kind === 'added')
        return h(
          doc,
          'div',
          { class: 'line added modified' },
          no,
          h(doc, 'span', { class: 'sign', 'aria-hidden': 'true' }, '+'),
          h(doc, 'ins', {}, text),
        );
      return h(
        doc,
        'div',
        { class: 'line context' },
        no,
        h(doc, 'span', { class: 'sign', 'aria-hidden': 'true' }, ' '),
        h(doc, 'span', {}, text),
      );
    }),
  );
}
