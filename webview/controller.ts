// Wires the rendered panel to the state and to the host: delegated DOM events become reducer
// actions and messages; host messages become reducer actions; the panel re-renders and keeps
// focus. Takes the document and the webview API as arguments, so it runs under jsdom in tests.
import type { ReviewDecision } from '../server/contract/change-control';
import { DECISION_ORDER } from '../extension/core/labels';
import { PANEL_ACTIONS, type HostToWebview, type PanelAction, type PersistedState, type WebviewToHost } from './protocol';
import { isAct } from './render/acts';
import { domId } from './render/composer';
import { renderApp } from './render/app';
import { actionKey, deleteKey, initialState, isPending, operationFor, parseComposerKey, reduce, resolveKey, REVIEW_KEY, toPersisted, type ViewAction, type ViewState } from './state';

export interface WebviewApi {
  postMessage(message: WebviewToHost): void;
  getState(): unknown;
  setState(state: PersistedState): void;
}

export function isPersistedState(value: unknown): value is PersistedState {
  if (!value || typeof value !== 'object') return false;
  const v = value as Record<string, unknown>;
  return (
    typeof v.changeRequestId === 'number' &&
    !!v.drafts && typeof v.drafts === 'object' &&
    Array.isArray(v.openComposers) && v.openComposers.every((k) => typeof k === 'string') &&
    (DECISION_ORDER as readonly unknown[]).includes(v.reviewDecision) &&
    Array.isArray(v.expandedChanges) && v.expandedChanges.every((n) => typeof n === 'number')
  );
}

function isHostMessage(value: unknown): value is HostToWebview {
  return !!value && typeof value === 'object' && typeof (value as { type?: unknown }).type === 'string';
}

export class PanelController {
  private state: ViewState = initialState;
  private opCounter = 0;

  constructor(
    private readonly doc: Document,
    private readonly container: HTMLElement,
    private readonly api: WebviewApi,
  ) {
    const saved = api.getState();
    if (isPersistedState(saved)) this.state = reduce(this.state, { type: 'restored', state: saved });
    container.addEventListener('click', (e) => this.onClick(e));
    container.addEventListener('input', (e) => this.onInput(e));
    container.addEventListener('change', (e) => this.onChange(e));
    container.addEventListener('keydown', (e) => this.onKeyDown(e));
    container.addEventListener('submit', (e) => e.preventDefault());
    this.render();
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
    this.dispatch(message);
  }

  private dispatch(action: ViewAction, render = true): void {
    this.state = reduce(this.state, action);
    const persisted = toPersisted(this.state);
    if (persisted) this.api.setState(persisted);
    if (render) this.render();
  }

  private nextOpId(): string {
    this.opCounter += 1;
    return `op-${this.opCounter}`;
  }

  private render(): void {
    const active = this.doc.activeElement as HTMLElement | null;
    const focusId = active && this.container.contains(active) ? active.id : '';
    const selection = active instanceof this.doc.defaultView!.HTMLTextAreaElement ? [active.selectionStart, active.selectionEnd] : null;
    this.container.replaceChildren(renderApp(this.doc, this.state));
    if (focusId) this.focus(focusId, selection);
  }

  private focus(id: string, selection: (number | null)[] | null = null): void {
    const el = this.doc.getElementById(id);
    if (!el) return;
    el.focus();
    if (selection && el instanceof this.doc.defaultView!.HTMLTextAreaElement && selection[0] !== null) {
      el.setSelectionRange(selection[0], selection[1] ?? selection[0]);
    }
  }

  private send(key: string): void {
    if (isPending(this.state, key)) return;
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
    const act = el.dataset.act;
    if (!isAct(act)) return;
    if (el.getAttribute('aria-disabled') === 'true' || (el as HTMLButtonElement).disabled) return;
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
      case 'panel-action': {
        const action = el.dataset.action as PanelAction;
        if (!(PANEL_ACTIONS as readonly string[]).includes(action)) return;
        const opId = this.nextOpId();
        this.dispatch({ type: 'operationSent', opId, key: actionKey(action) });
        this.api.postMessage({ type: 'panelAction', opId, action });
        return;
      }
      case 'toggle-attrs':
        this.dispatch({ type: 'toggleAllAttributes', changeId: Number(el.dataset.change) });
        return;
      case 'open-link':
        this.api.postMessage({ type: 'openLink', url: el.dataset.url ?? '' });
        return;
      case 'refresh':
        this.api.postMessage({ type: 'refresh' });
        return;
    }
  }

  private onInput(e: Event): void {
    const el = e.target as HTMLTextAreaElement | null;
    const key = el?.dataset?.draft;
    if (key === undefined) return;
    // The text box already shows the text: keep it in the state without re-rendering.
    this.dispatch({ type: 'draftChanged', key, text: el!.value }, false);
  }

  private onChange(e: Event): void {
    const el = e.target as HTMLInputElement | null;
    if (el?.name === 'decision' && (DECISION_ORDER as readonly string[]).includes(el.value)) {
      this.dispatch({ type: 'decisionChanged', decision: el.value as ReviewDecision });
    }
  }

  private onKeyDown(e: KeyboardEvent): void {
    const el = e.target as HTMLTextAreaElement | null;
    const key = el?.dataset?.draft;
    if (key === undefined) return;
    if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
      e.preventDefault();
      this.dispatch({ type: 'draftChanged', key, text: el!.value }, false);
      this.send(key);
    } else if (e.key === 'Escape' && key !== REVIEW_KEY && parseComposerKey(key)) {
      e.preventDefault();
      this.dispatch({ type: 'composerClosed', key });
    }
  }
}
