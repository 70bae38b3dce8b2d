// A Markdown text box with Send and Cancel, bound to a composer key of the state.
import { isPending, REVIEW_KEY, type ViewState } from '../state';
import { domId, h } from './dom';

export { domId };

export interface ComposerOptions {
  label: string;
  sendLabel: string;
  placeholder?: string;
  /** The review form has no Cancel (it is always shown). */
  cancellable?: boolean;
  disabled?: boolean;
  rows?: number;
}

export function renderComposer(doc: Document, state: ViewState, key: string, opts: ComposerOptions): HTMLElement {
  const id = `ta-${domId(key)}`;
  const hintId = `${id}-hint`;
  const errorId = `${id}-error`;
  const pending = isPending(state, key);
  const error = state.errors[key];
  const textarea = h(
    doc,
    'textarea',
    {
      id,
      'data-draft': key,
      rows: opts.rows ?? (key === REVIEW_KEY ? 4 : 3),
      placeholder: opts.placeholder ?? 'Markdown',
      'aria-describedby': error ? `${hintId} ${errorId}` : hintId,
      'aria-invalid': error ? 'true' : undefined,
      disabled: pending || opts.disabled,
    },
    state.drafts[key] ?? '',
  );
  return h(
    doc,
    'div',
    { class: 'composer', 'data-composer': key },
    h(doc, 'label', { for: id }, opts.label),
    textarea,
    h(
      doc,
      'p',
      { class: 'hint', id: hintId },
      'Markdown. Ctrl+Enter sends',
      opts.cancellable === false ? '.' : ', Escape cancels.',
    ),
    error ? h(doc, 'p', { class: 'error', id: errorId, role: 'alert' }, error) : null,
    h(
      doc,
      'div',
      { class: 'buttons' },
      h(
        doc,
        'button',
        {
          type: 'button',
          class: 'primary',
          id: `send-${domId(key)}`,
          'data-act': 'send',
          'data-key': key,
          disabled: pending || opts.disabled,
        },
        pending ? 'Sending…' : opts.sendLabel,
      ),
      opts.cancellable === false
        ? null
        : h(
            doc,
            'button',
            { type: 'button', class: 'secondary', 'data-act': 'close-composer', 'data-key': key, disabled: pending },
            'Cancel',
          ),
    ),
  );
}
