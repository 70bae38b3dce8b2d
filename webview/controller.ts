// Wires the page to the state and to the host: delegated DOM events become reducer actions and
// messages; host messages become reducer actions; the view then updates only what changed.
// Takes the document and the webview API as arguments, so it runs under jsdom in tests.
import type { ReviewDecision } from '../contract/api/change-control';
import { DECISION_ORDER } from '../contract/labels';
import {
  PANEL_ACTIONS,
  type HostToWebview,
  type PanelAction,
  type PersistedState,
  type WebviewToHost,
} from '../contract/webview/protocol';
import { isAct } from './render/acts';
import { domId } from './render/dom';
import {
  actionKey,
  deleteKey,
  fitsDelta,
  initialState,
  isPending,
  operationFor,
  parseComposerKey,
  POSTING_ACTS,
  reduce,
  resolveKey,
  APPLY_ALL_KEY,
  REVIEW_KEY,
  reviewProblem,
  toPersisted,
  type ViewAction,
  type ViewState,
} from './state';
import { PageView, type ViewOptions } from './view';

export interface WebviewApi {
  postMessage(message: WebviewToHost): void;
  getState(): unknown;
  setState(state: PersistedState): void;
}

/** A saved state, read tolerantly: fields an older version did not save take their defaults. */
export function readPersistedState(value: unknown): PersistedState | null {
  if (!value || typeof value !== 'object') return null;
  const v = value as Record<string, unknown>;
  if (typeof v.changeRequestId !== 'number') return null;
  const numbers = (x: unknown) => (Array.isArray(x) ? x.filter((n): n is number => typeof n === 'number') : []);
  const drafts: Record<string, string> = {};
  if (v.drafts && typeof v.drafts === 'object') {
    for (const [k, t] of Object.entries(v.drafts as Record<string, unknown>)) if (typeof t === 'string') drafts[k] = t;
  }
  return {
    changeRequestId: v.changeRequestId,
    drafts,
    openComposers: Array.isArray(v.openComposers)
      ? v.openComposers.filter((k): k is string => typeof k === 'string')
      : [],
    reviewDecision: (DECISION_ORDER as readonly unknown[]).includes(v.reviewDecision)
      ? (v.reviewDecision as ReviewDecision)
      : null,
    expandedChanges: numbers(v.expandedChanges),
    collapsedChanges: numbers(v.collapsedChanges),
    filter: typeof v.filter === 'string' ? v.filter : '',
  };
}

/** The live region that says the result of an action (outside the page's regions, never redrawn). */
export const ANNOUNCER_ID = 'announcer';

/** Where the result of what a key stands for shows: the merge state for the page's actions, the caller's review for a review. */
function resultOf(key: string): string | null {
  if (key === REVIEW_KEY) return 'my-review';
  if (key.startsWith('action:')) return 'merge-state';
  return null;
}

function isHostMessage(value: unknown): value is HostToWebview {
  return !!value && typeof value === 'object' && typeof (value as { type?: unknown }).type === 'string';
}

export class PanelController {
  private state: ViewState = initialState;
  private opCounter = 0;
  readonly view: PageView;

  constructor(
    private readonly doc: Document,
    private readonly container: HTMLElement,
    private readonly api: WebviewApi,
    options: ViewOptions = {},
  ) {
    this.view = new PageView(doc, container, options);
    const saved = readPersistedState(api.getState());
    if (saved) this.state = reduce(this.state, { type: 'restored', state: saved });
    container.addEventListener('click', (e) => this.onClick(e));
    container.addEventListener('input', (e) => this.onInput(e));
    container.addEventListener('change', (e) => this.onChange(e));
    container.addEventListener('keydown', (e) => this.onKeyDown(e));
    // The first use of the page keeps the tab (a preview tab is reused by the next tree click otherwise).
    for (const type of ['input', 'change', 'keydown'] as const)
      container.addEventListener(type, () => this.interacted());
    container.addEventListener('submit', (e) => e.preventDefault());
    this.view.update(this.state);
  }

  get current(): ViewState {
    return this.state;
  }

  /** Tells the host the panel is listening (the handshake). */
  start(): void {
    this.api.postMessage({ type: 'ready' });
  }

  receive(message: unknown): void {
    if (!isHostMessage(message)) return;
    if (message.type === 'snapshotDelta' && !fitsDelta(this.state, message.delta)) {
      // Made against a snapshot this panel does not hold: ask for a whole one.
      this.api.postMessage({ type: 'ready' });
      return;
    }
    const done = message.type === 'operationDone' ? this.state.pending[message.opId] : undefined;
    this.dispatch(message);
    if (done !== undefined && resultOf(done)) {
      // Said now, and again with the request as it is after the action (the page the host sends next).
      this.awaiting = done;
      this.announceResult(done);
    } else if ((message.type === 'snapshot' || message.type === 'snapshotDelta') && this.awaiting) {
      this.announceResult(this.awaiting);
      this.awaiting = null;
    }
  }

  /** An action or a review the host reported done: its result is yet to be told. */
  private awaiting: string | null = null;

  /**
   * The result of an action (the merge state) or of a review (the caller's review) said in the
   * page's live region, and the focus put on it: a screen reader hears what changed.
   */
  private announceResult(key: string): void {
    const target = this.doc.getElementById(resultOf(key)!);
    if (!target) return;
    let region = this.doc.getElementById(ANNOUNCER_ID);
    if (!region) {
      region = this.doc.createElement('div');
      region.id = ANNOUNCER_ID;
      region.className = 'visually-hidden';
      region.setAttribute('role', 'status');
      region.setAttribute('aria-live', 'polite');
      this.doc.body.append(region);
    }
    region.textContent = (target.textContent ?? '').replace(/\s+/g, ' ').trim();
    target.focus();
  }

  private dispatch(action: ViewAction, render = true): void {
    this.state = reduce(this.state, action);
    const persisted = toPersisted(this.state);
    if (persisted) this.api.setState(persisted);
    if (render) this.view.update(this.state);
  }

  private told = false;
  private interacted(): void {
    if (this.told) return;
    this.told = true;
    this.api.postMessage({ type: 'interacted' });
  }

  private nextOpId(): string {
    this.opCounter += 1;
    return `op-${this.opCounter}`;
  }

  private focus(id: string): void {
    this.doc.getElementById(id)?.focus();
  }

  private send(key: string): void {
    if (isPending(this.state, key)) return;
    if (this.state.offline) {
      this.dispatch({ type: 'composerError', key, message: this.state.offline });
      return;
    }
    if (key === REVIEW_KEY) {
      const problem = reviewProblem(this.state);
      if (problem) {
        this.dispatch({ type: 'composerError', key, message: problem });
        return;
      }
    }
    const op = operationFor(this.state, key, this.nextOpId());
    if (!op) return;
    this.dispatch({ type: 'operationSent', opId: op.opId, key });
    this.api.postMessage(op);
  }

  private onClick(e: Event): void {
    const target = e.target as HTMLElement | null;
    const link = target?.closest('a[href]');
    if (link) {
      e.preventDefault();
      this.api.postMessage({ type: 'openLink', url: link.getAttribute('href') ?? '' });
      return;
    }
    const el = target?.closest<HTMLElement>('[data-act]');
    if (!el || !this.container.contains(el)) return;
    this.interacted();
    const act = el.dataset.act;
    if (!isAct(act)) return;
    if (act !== 'send' && el.getAttribute('aria-disabled') === 'true') return;
    if ((el as HTMLButtonElement).disabled) return;
    // Offline, what would post is refused here (Send says why in its composer).
    if (this.state.offline && (POSTING_ACTS as readonly string[]).includes(act) && act !== 'send') return;
    const changeId = Number(el.dataset.change);
    switch (act) {
      case 'open-composer': {
        const key = el.dataset.key ?? '';
        this.dispatch({ type: 'composerOpened', key, text: el.dataset.text });
        this.focus(`ta-${domId(key)}`);
        return;
      }
      case 'close-composer':
        this.dispatch({ type: 'composerClosed', key: el.dataset.key ?? '' });
        return;
      case 'send':
        this.send(el.dataset.key ?? '');
        return;
      case 'delete-comment': {
        const commentId = Number(el.dataset.comment);
        const opId = this.nextOpId();
        this.dispatch({ type: 'operationSent', opId, key: deleteKey(commentId) });
        this.api.postMessage({ type: 'deleteComment', opId, commentId });
        return;
      }
      case 'resolve': {
        const commentId = Number(el.dataset.comment);
        const opId = this.nextOpId();
        this.dispatch({ type: 'operationSent', opId, key: resolveKey(commentId) });
        this.api.postMessage({ type: 'setResolved', opId, commentId, resolved: el.dataset.resolved === 'true' });
        return;
      }
      case 'apply-suggestions': {
        const commentIds = (el.dataset.comments ?? '')
          .split(',')
          .map(Number)
          .filter((n) => Number.isInteger(n) && n > 0);
        if (commentIds.length === 0) return;
        const opId = this.nextOpId();
        this.dispatch({ type: 'operationSent', opId, key: el.dataset.key ?? APPLY_ALL_KEY });
        this.api.postMessage({ type: 'applySuggestions', opId, commentIds });
        return;
      }
      case 'panel-action': {
        const action = el.dataset.action as PanelAction;
        if (!(PANEL_ACTIONS as readonly string[]).includes(action)) return;
        const opId = this.nextOpId();
        this.dispatch({ type: 'operationSent', opId, key: actionKey(action) });
        this.api.postMessage({ type: 'panelAction', opId, action });
        return;
      }
      case 'toggle-attrs':
        this.dispatch({ type: 'toggleAllAttributes', changeId });
        return;
      case 'toggle-collapse':
        this.dispatch({ type: 'toggleCollapsed', changeId });
        return;
      case 'collapse-all':
      case 'expand-all':
        this.dispatch({ type: 'collapseAll', collapsed: act === 'collapse-all' });
        return;
      case 'open-diff':
        if (Number.isInteger(changeId) && changeId > 0)
          this.api.postMessage({ type: 'openDiff', changeDiff: changeId });
        return;
      case 'open-all':
        this.api.postMessage({ type: 'openAllChanges' });
        return;
      case 'compare-with-main':
        if (Number.isInteger(changeId) && changeId > 0)
          this.api.postMessage({ type: 'compareWithMain', changeDiff: changeId });
        return;
      case 'reveal-change':
        if (!this.view.revealChange(changeId) && this.state.filter) {
          // Filtered out: show every change again, then go to it.
          this.dispatch({ type: 'filterChanged', text: '' });
          const box = this.doc.getElementById('changes-filter') as HTMLInputElement | null;
          if (box) box.value = '';
          this.view.revealChange(changeId);
        }
        return;
      case 'show-more-timeline':
        this.dispatch({ type: 'showMoreTimeline' });
        return;
      case 'skip-to-changes': {
        const target =
          this.doc.getElementById('changes-filter') ??
          this.container.querySelector<HTMLElement>('article.change .twisty');
        target?.focus();
        return;
      }
      case 'open-link':
        this.api.postMessage({ type: 'openLink', url: el.dataset.url ?? '' });
        return;
      case 'refresh':
        this.api.postMessage({ type: 'refresh' });
        return;
    }
  }

  private onInput(e: Event): void {
    const el = e.target as HTMLTextAreaElement | HTMLInputElement | null;
    if (el?.id === 'changes-filter') {
      this.dispatch({ type: 'filterChanged', text: el.value });
      return;
    }
    const key = el?.dataset?.draft;
    if (key === undefined) return;
    // The text box already shows the text: keep it in the state without rendering anything.
    this.dispatch({ type: 'draftChanged', key, text: el!.value }, false);
  }

  private onChange(e: Event): void {
    const el = e.target as HTMLInputElement | null;
    if (el?.name === 'decision' && (DECISION_ORDER as readonly string[]).includes(el.value)) {
      this.dispatch({ type: 'decisionChanged', decision: el.value as ReviewDecision });
    }
  }

  private onKeyDown(e: KeyboardEvent): void {
    const el = e.target as HTMLElement | null;
    const key = (el as HTMLTextAreaElement | null)?.dataset?.draft;
    if (key !== undefined) {
      if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
        e.preventDefault();
        this.dispatch({ type: 'draftChanged', key, text: (el as HTMLTextAreaElement).value }, false);
        this.send(key);
      } else if (e.key === 'Escape' && key !== REVIEW_KEY && parseComposerKey(key)) {
        e.preventDefault();
        this.dispatch({ type: 'composerClosed', key });
      }
      return;
    }
    // The list of changes is a feed: Page Down and Page Up move between changes.
    if (el && (e.key === 'PageDown' || e.key === 'PageUp') && el.closest('article.change')) {
      if (this.view.focusNeighbour(el, e.key === 'PageDown' ? 1 : -1)) e.preventDefault();
    }
  }
}
