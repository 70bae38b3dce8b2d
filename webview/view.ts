// The page: built once, then updated in place. Each region (header, merge gate, decision form,
// approvals, checks, description, list head, timeline) is rendered again only when its inputs
// changed (see plan.ts); the list of changes is virtual (only the changes on screen, plus a
// margin, are in the DOM) and keyed (a refresh touches only the changes that differ). Focus, the
// caret of a text box and the scroll position survive every update.
import type { ChangeDiff } from '../contract/api/branching';
import { estimateLines } from './diff';
import { Derived, type CommentIndex } from './derive';
import { planList, planRegions } from './plan';
import { renderApproval } from './render/approval';
import { estimateChangeHeight, renderChangeItem } from './render/change';
import { renderChecks, renderMergeState } from './render/checks';
import { renderDecision } from './render/decision';
import { h } from './render/dom';
import { renderHeader } from './render/header';
import {
  renderChangesCount,
  renderChangesHead,
  renderDescription,
  renderOrphans,
  renderTimeline,
} from './render/sections';
import { sameInputs } from '../contract/webview/share';
import { actionKey, APPLY_ALL_KEY, isPending, POSTING_ACTS, REVIEW_KEY, type ViewState } from './state';
import { applicableSuggestionIds } from './threads';
import { PANEL_ACTIONS } from '../contract/webview/protocol';
import { buildTimeline } from './timeline';
import { relativeTime } from '../contract/time';
import { computeWindow, HeightCache, prefixSums, sameWindow, type VirtualWindow } from './virtual';

export interface ViewOptions {
  /** Pixels rendered above and below the screen. */
  overscan?: number;
  now?: () => number;
}

interface RegionContext {
  state: ViewState;
  derived: Derived;
  comments: CommentIndex;
  visible: readonly ChangeDiff[];
  now: number;
}

interface RegionDef {
  id: string;
  slot: 'top' | 'side' | 'before' | 'listHead' | 'listFoot' | 'after';
  inputs(c: RegionContext): unknown[];
  render(doc: Document, c: RegionContext): HTMLElement;
}

const actionSignature = (s: ViewState) =>
  PANEL_ACTIONS.map((a) => `${isPending(s, actionKey(a)) ? 1 : 0}${s.errors[actionKey(a)] ?? ''}`).join('|');

const timelineOf = (() => {
  let last: { key: unknown[]; value: ReturnType<typeof buildTimeline> } | null = null;
  return (c: RegionContext) => {
    const snap = c.state.snapshot!;
    const key = [snap.changeRequest, snap.history, snap.reviews, snap.comments, snap.checks];
    if (last && sameInputs(last.key, key)) return last.value;
    last = { key, value: buildTimeline(snap) };
    return last.value;
  };
})();

/** The regions in page order (which is also the keyboard order): gate and decision come before the changes. */
const REGIONS: RegionDef[] = [
  {
    id: 'offline',
    slot: 'top',
    inputs: ({ state }) => [state.offline],
    render: (doc, { state }) => renderOffline(doc, state.offline),
  },
  {
    id: 'header',
    slot: 'top',
    inputs: ({ state }) => [
      state.snapshot!.changeRequest,
      state.snapshot!.problems,
      state.loadError,
      state.refreshing,
      actionSignature(state),
    ],
    render: (doc, { state, now }) => renderHeader(doc, state.snapshot!, state, now),
  },
  {
    id: 'gate',
    slot: 'side',
    inputs: ({ state }) => [state.snapshot!.changeRequest, isPending(state, actionKey('sync'))],
    render: (doc, { state }) =>
      renderMergeState(doc, state.snapshot!.changeRequest, isPending(state, actionKey('sync'))),
  },
  {
    id: 'decision',
    slot: 'side',
    inputs: ({ state }) => {
      const s = state.snapshot!;
      return [
        s.changeRequest.actions.review?.allowed,
        s.changeRequest.actions.review?.reason,
        s.evaluation,
        s.changeRequest.requester?.id,
        s.changeRequest.status,
        s.changeRequest.ready_to_merge,
        s.reviews,
        s.me.id,
        state.reviewDecision,
        isPending(state, REVIEW_KEY),
        state.errors[REVIEW_KEY],
      ];
    },
    render: (doc, { state, now }) => renderDecision(doc, state.snapshot!, state, now),
  },
  {
    id: 'approval',
    slot: 'side',
    inputs: ({ state }) => [state.snapshot!.evaluation, state.snapshot!.changeRequest.status],
    render: (doc, { state }) => renderApproval(doc, state.snapshot!.evaluation, state.snapshot!.changeRequest.status),
  },
  {
    id: 'checks',
    slot: 'side',
    inputs: ({ state }) => [state.snapshot!.checks, state.snapshot!.changes, state.snapshot!.changeRequest.status],
    render: (doc, { state, now }) =>
      renderChecks(doc, state.snapshot!.checks, now, state.snapshot!.changes, state.snapshot!.changeRequest.status),
  },
  {
    id: 'description',
    slot: 'before',
    inputs: ({ state }) => [state.snapshot!.changeRequest.description],
    render: (doc, { state }) => renderDescription(doc, state.snapshot!),
  },
  {
    id: 'changes-head',
    slot: 'listHead',
    // The filter box keeps its own text while typing: the filter is not an input of this region.
    inputs: ({ state }) => [
      state.snapshot!.changes.length,
      state.snapshot!.changeRequest.branch_deleted,
      applicableSuggestionIds(state.snapshot!).join(','),
      isPending(state, APPLY_ALL_KEY),
      state.errors[APPLY_ALL_KEY],
    ],
    render: (doc, { state }) => renderChangesHead(doc, state.snapshot!, state),
  },
  {
    id: 'changes-count',
    slot: 'listHead',
    inputs: ({ state, visible }) => [visible.length, state.snapshot!.changes.length, state.filter.trim() !== ''],
    render: (doc, { state, visible }) =>
      renderChangesCount(doc, visible.length, state.snapshot!.changes.length, state.filter.trim() !== ''),
  },
  {
    id: 'orphans',
    slot: 'listFoot',
    inputs: ({ state, derived, comments }) => {
      const orphans = derived.orphans(comments, derived.knownChanges(state.snapshot!.changes));
      return orphans.length
        ? [
            orphans.flatMap((t) => [t.root, ...t.replies]),
            state.openComposers,
            state.pending,
            state.errors,
            state.snapshot!.changeRequest.actions.comment?.allowed,
          ]
        : [0];
    },
    render: (doc, { state, derived, comments, now }) =>
      renderOrphans(
        doc,
        state.snapshot!,
        state,
        derived.orphans(comments, derived.knownChanges(state.snapshot!.changes)),
        now,
      ),
  },
  {
    id: 'timeline',
    slot: 'after',
    inputs: (c) => [
      timelineOf(c),
      c.state.timelineLimit,
      c.state.snapshot!.changes.length === 0 ? 0 : c.state.snapshot!.changes,
    ],
    render: (doc, c) => renderTimeline(doc, c.state.snapshot!, timelineOf(c), c.state.timelineLimit, c.now),
  },
];

/** The banner of an offline host: why nothing can be posted now (hidden while online). */
function renderOffline(doc: Document, offline: string | null): HTMLElement {
  return h(
    doc,
    'div',
    { id: 'offline-banner', class: 'offline-banner', role: 'status', hidden: offline === null },
    offline ?? '',
  );
}

/** Replaces `old` by `next`, giving focus (and a text box's caret) back to the element with the same id. */
export function replaceKeepingFocus(doc: Document, old: Element, next: Element): void {
  const active = doc.activeElement as HTMLElement | null;
  const had = active && active !== doc.body && old.contains(active) ? active : null;
  const id = had?.id ?? '';
  const caret =
    had && 'selectionStart' in had && typeof (had as HTMLTextAreaElement).selectionStart === 'number'
      ? ([(had as HTMLTextAreaElement).selectionStart, (had as HTMLTextAreaElement).selectionEnd] as const)
      : null;
  old.replaceWith(next);
  if (!had) return;
  const again = id ? doc.getElementById(id) : null;
  if (!again) return;
  again.focus({ preventScroll: true });
  if (caret && 'setSelectionRange' in again && typeof (again as HTMLTextAreaElement).setSelectionRange === 'function') {
    try {
      (again as HTMLTextAreaElement).setSelectionRange(caret[0], caret[1]);
    } catch {
      // Not every input type has a caret.
    }
  }
}

interface ItemRecord {
  el: HTMLElement;
  inputs: unknown[];
}

/** The virtual, keyed list of changes. */
class ChangeList {
  readonly el: HTMLElement;
  private readonly top: HTMLElement;
  private readonly bottom: HTMLElement;
  private readonly items = new Map<string, ItemRecord>();
  private order: string[] = [];
  private readonly heights = new HeightCache();
  private readonly estimates = new WeakMap<ChangeDiff, number>();
  private readonly lastChange = new Map<number, ChangeDiff>();
  private offsets: Float64Array = new Float64Array(1);
  private window: VirtualWindow | null = null;
  private ctx: RegionContext | null = null;
  private keys: string[] = [];
  private width = 0;
  private readonly observer: ResizeObserver | null;

  constructor(
    private readonly doc: Document,
    private readonly overscan: number,
  ) {
    this.top = h(doc, 'div', { class: 'spacer', 'aria-hidden': 'true' });
    this.bottom = h(doc, 'div', { class: 'spacer', 'aria-hidden': 'true' });
    this.el = h(
      doc,
      'div',
      { class: 'change-list', role: 'feed', 'aria-labelledby': 'changes-title', id: 'change-list' },
      this.top,
      this.bottom,
    );
    const RO = (doc.defaultView as (Window & typeof globalThis) | null)?.ResizeObserver;
    this.observer = RO ? new RO((entries) => this.onResize(entries)) : null;
  }

  /** Heights are keyed by change and by how it shows (folded, all attributes). */
  private heightKey(id: number, state: ViewState): string {
    return `${id}:${state.collapsedChanges.includes(id) ? 'c' : state.expandedChanges.includes(id) ? 'a' : 'd'}`;
  }

  private estimate(change: ChangeDiff, collapsed: boolean, comments: CommentIndex): number {
    let lines = this.estimates.get(change);
    if (lines === undefined) this.estimates.set(change, (lines = estimateLines(change)));
    return estimateChangeHeight(collapsed, lines, comments.threads.get(change.id)?.length ?? 0);
  }

  private computeOffsets(): void {
    const c = this.ctx!;
    const { state, visible, comments } = c;
    const collapsedSet = new Set(state.collapsedChanges);
    const allSet = new Set(state.expandedChanges);
    const heights = visible.map((change) => {
      const collapsed = collapsedSet.has(change.id);
      const key = `${change.id}:${collapsed ? 'c' : allSet.has(change.id) ? 'a' : 'd'}`;
      return this.heights.get(key, () => this.estimate(change, collapsed, comments));
    });
    this.offsets = prefixSums(heights);
  }

  private screen(): { top: number; height: number } {
    const view = this.doc.defaultView;
    const rect = this.el.getBoundingClientRect();
    return { top: -rect.top, height: view?.innerHeight || 800 };
  }

  private itemInputs(change: ChangeDiff, index: number): unknown[] {
    const { state, comments, derived, visible } = this.ctx!;
    const snap = state.snapshot!;
    return [
      change,
      comments.flat.get(change.id) ?? [],
      derived.uiOf(state, change.id, comments),
      state.collapsedChanges.includes(change.id),
      state.expandedChanges.includes(change.id),
      snap.changeRequest.actions.comment?.allowed === true,
      snap.changeRequest.actions.apply_suggestions?.allowed === true,
      snap.me.id,
      index,
      visible.length,
    ];
  }

  private renderItem(change: ChangeDiff, index: number): HTMLElement {
    const { state, comments, visible, now } = this.ctx!;
    return renderChangeItem(
      this.doc,
      { snap: state.snapshot!, state, now, position: index + 1, count: visible.length },
      change,
      comments.threads.get(change.id) ?? [],
    );
  }

  /** Takes a new state: forgets heights of changes whose content changed, then renders the window. */
  update(ctx: RegionContext): void {
    this.ctx = ctx;
    for (const change of ctx.visible) {
      const before = this.lastChange.get(change.id);
      if (before !== undefined && before !== change) {
        for (const mode of ['c', 'a', 'd']) this.heights.forget(`${change.id}:${mode}`);
      }
      this.lastChange.set(change.id, change);
    }
    this.keys = ctx.visible.map((c) => String(c.id));
    this.computeOffsets();
    this.render(true);
  }

  /** Renders the items of the current window; `all` also re-checks the kept items' inputs. */
  private render(all: boolean): void {
    if (!this.ctx) return;
    for (let pass = 0; pass < 3; pass++) {
      const win = computeWindow({ offsets: this.offsets, ...this.screen(), overscan: this.overscan });
      const windowChanged = !sameWindow(this.window, win);
      this.window = win;
      if (windowChanged || all) this.apply(win);
      this.top.style.height = `${win.padTop}px`;
      this.bottom.style.height = `${win.padBottom}px`;
      all = false;
      // Measure what was rendered; when the guesses were off, the window may need other items.
      if (!this.measure()) break;
      this.computeOffsets();
    }
  }

  private apply(win: VirtualWindow): void {
    const { visible } = this.ctx!;
    const nextKeys = this.keys.slice(win.start, win.end);
    const byKey = new Map<string, { change: ChangeDiff; index: number }>();
    for (let i = win.start; i < win.end; i++) byKey.set(this.keys[i]!, { change: visible[i]!, index: i });
    const nextInputs = new Map<string, unknown[]>();
    for (const [key, { change, index }] of byKey) nextInputs.set(key, this.itemInputs(change, index));
    const plan = planList(
      this.order,
      nextKeys,
      (key) => !sameInputs(this.items.get(key)?.inputs, nextInputs.get(key)!),
    );
    for (const key of plan.remove) {
      const rec = this.items.get(key);
      if (!rec) continue;
      this.observer?.unobserve(rec.el);
      rec.el.remove();
      this.items.delete(key);
    }
    for (const key of plan.update) {
      const rec = this.items.get(key)!;
      const { change, index } = byKey.get(key)!;
      const el = this.renderItem(change, index);
      this.observer?.unobserve(rec.el);
      replaceKeepingFocus(this.doc, rec.el, el);
      this.observer?.observe(el);
      this.items.set(key, { el, inputs: nextInputs.get(key)! });
    }
    for (const { key, before } of plan.place) {
      let rec = this.items.get(key);
      if (!rec) {
        const { change, index } = byKey.get(key)!;
        rec = { el: this.renderItem(change, index), inputs: nextInputs.get(key)! };
        this.items.set(key, rec);
        this.observer?.observe(rec.el);
      }
      const anchor = before !== null ? this.items.get(before)!.el : this.bottom;
      this.el.insertBefore(rec.el, anchor);
    }
    this.order = nextKeys;
  }

  /** Reads the rendered items' heights; true when one differs from what the offsets assumed. */
  private measure(): boolean {
    const { visible, state } = this.ctx!;
    const win = this.window!;
    let changed = false;
    for (let i = win.start; i < win.end; i++) {
      const id = visible[i]!.id;
      const rec = this.items.get(String(id));
      if (!rec) continue;
      const height = rec.el.getBoundingClientRect().height;
      const assumed = this.offsets[i + 1]! - this.offsets[i]!;
      if (height > 0 && Math.abs(height - assumed) >= 0.5) {
        this.heights.set(this.heightKey(id, state), height);
        changed = true;
      }
    }
    return changed;
  }

  private onResize(entries: ResizeObserverEntry[]): void {
    if (!this.ctx) return;
    let changed = false;
    for (const e of entries) {
      const el = e.target as HTMLElement;
      const id = Number(el.dataset.key);
      if (!el.isConnected || !Number.isFinite(id)) continue;
      if (this.heights.set(this.heightKey(id, this.ctx.state), el.getBoundingClientRect().height)) changed = true;
    }
    if (changed) {
      this.computeOffsets();
      this.render(false);
    }
  }

  /** The screen moved (scroll) or changed size. */
  onScreenChange(): void {
    if (!this.ctx) return;
    const width = this.doc.documentElement.clientWidth;
    if (width !== this.width) {
      // Wrapping changes with the width: measured heights no longer hold (rendered items are measured again).
      if (this.width !== 0) this.heights.forgetAll();
      this.width = width;
      this.computeOffsets();
    }
    this.render(false);
  }

  /** Scrolls the list so that the change at `index` is at the top, renders it, and returns its element. */
  reveal(index: number): HTMLElement | null {
    if (!this.ctx || index < 0 || index >= this.keys.length) return null;
    const view = this.doc.defaultView;
    const listTop = this.el.getBoundingClientRect().top + (view?.scrollY ?? 0);
    view?.scrollTo?.({ top: Math.max(0, listTop + this.offsets[index]! - 8) });
    this.render(false);
    const rec = this.items.get(this.keys[index]!);
    if (!rec) return null;
    // The guesses above it may have been corrected while rendering: put it at the top exactly.
    rec.el.scrollIntoView?.({ block: 'start' });
    this.render(false);
    return this.items.get(this.keys[index]!)?.el ?? null;
  }

  indexOf(changeId: number): number {
    return this.keys.indexOf(String(changeId));
  }

  /** How many changes the list holds (rendered or not). */
  get count(): number {
    return this.keys.length;
  }

  dispose(): void {
    this.observer?.disconnect();
  }
}

export class PageView {
  private readonly derived = new Derived();
  private readonly regions = new Map<string, { el: HTMLElement; inputs: unknown[] }>();
  private slots: Record<RegionDef['slot'], HTMLElement> | null = null;
  private list: ChangeList | null = null;
  private readonly overscan: number;
  private readonly now: () => number;
  private scheduled = false;

  constructor(
    private readonly doc: Document,
    private readonly container: HTMLElement,
    options: ViewOptions = {},
  ) {
    this.overscan = options.overscan ?? 600;
    this.now = options.now ?? (() => Date.now());
    const view = doc.defaultView;
    view?.addEventListener('scroll', () => this.schedule(), { passive: true });
    view?.addEventListener('resize', () => this.schedule());
  }

  private schedule(): void {
    if (this.scheduled || !this.list) return;
    this.scheduled = true;
    const raf =
      this.doc.defaultView?.requestAnimationFrame?.bind(this.doc.defaultView) ??
      ((f: FrameRequestCallback) => setTimeout(() => f(0), 16));
    raf(() => {
      this.scheduled = false;
      this.list?.onScreenChange();
    });
  }

  /** Brings the page up to date with the state, touching only what changed. */
  update(state: ViewState): void {
    if (state.phase !== 'ready' || !state.snapshot) {
      this.teardown();
      this.container.replaceChildren(this.renderWaiting(state));
      return;
    }
    if (!this.slots) this.build();
    const comments = this.derived.comments(state.snapshot.comments);
    const visible = this.derived.visible(state.snapshot.changes, state.filter);
    const ctx: RegionContext = { state, derived: this.derived, comments, visible, now: this.now() };
    const inputs = new Map(REGIONS.map((r) => [r.id, r.inputs(ctx)] as const));
    const previous = new Map([...this.regions].map(([id, r]) => [id, r.inputs] as const));
    for (const id of planRegions(previous, inputs)) {
      const def = REGIONS.find((r) => r.id === id)!;
      const el = def.render(this.doc, ctx);
      const old = this.regions.get(id);
      if (old) replaceKeepingFocus(this.doc, old.el, el);
      else this.slots![def.slot].append(el);
      this.regions.set(id, { el, inputs: inputs.get(id)! });
    }
    this.list!.update(ctx);
    this.markPosting(state.offline);
  }

  /**
   * Offline, what would post is shown disabled with the reason (the controller refuses it too);
   * text boxes stay editable, so nothing typed is lost. Marks what it disabled, to undo it.
   */
  private markPosting(offline: string | null): void {
    const root = this.container.querySelector<HTMLElement>('#app');
    if (!root) return;
    if (offline) root.dataset.offline = 'true';
    else delete root.dataset.offline;
    for (const el of root.querySelectorAll<HTMLElement>('[data-offline-disabled]')) {
      if (offline) continue;
      el.removeAttribute('aria-disabled');
      el.removeAttribute('data-offline-disabled');
      const title = el.dataset.offlineTitle;
      if (title !== undefined) el.title = title;
      delete el.dataset.offlineTitle;
    }
    if (!offline) return;
    const selector = POSTING_ACTS.map((a) => `[data-act="${a}"]`).join(',');
    for (const el of root.querySelectorAll<HTMLElement>(selector)) {
      if (el.hasAttribute('data-offline-disabled')) continue;
      if (el.getAttribute('aria-disabled') === 'true') continue;
      el.dataset.offlineTitle = el.title;
      el.setAttribute('data-offline-disabled', '');
      el.setAttribute('aria-disabled', 'true');
      el.title = offline;
    }
  }

  private renderWaiting(state: ViewState): HTMLElement {
    const root = h(this.doc, 'main', { id: 'app', 'data-phase': state.phase });
    if (state.phase === 'failed') {
      root.append(
        h(
          this.doc,
          'div',
          { class: 'load-failed', role: 'alert' },
          h(this.doc, 'p', {}, `The change request could not be loaded: ${state.loadError ?? 'unknown error'}`),
          h(
            this.doc,
            'button',
            { type: 'button', class: 'primary', 'data-act': 'refresh', id: 'action-refresh' },
            'Retry',
          ),
        ),
      );
    } else {
      root.append(h(this.doc, 'p', { class: 'muted', role: 'status', id: 'loading' }, 'Loading the change request…'));
    }
    return root;
  }

  private build(): void {
    const doc = this.doc;
    const slot = (cls: string) => h(doc, 'div', { class: cls });
    const slots = {
      top: slot('top'),
      side: slot('side-column'),
      before: slot('slot-before'),
      listHead: slot('list-head'),
      listFoot: slot('list-foot'),
      after: slot('slot-after'),
    };
    slots.side.setAttribute('role', 'complementary');
    slots.side.setAttribute('aria-label', 'Merge gate and your review');
    this.list = new ChangeList(doc, this.overscan);
    const changes = h(
      doc,
      'section',
      { id: 'changes', 'aria-labelledby': 'changes-title' },
      slots.listHead,
      this.list.el,
      slots.listFoot,
    );
    const root = h(
      doc,
      'main',
      { id: 'app', 'data-phase': 'ready' },
      h(doc, 'button', { type: 'button', class: 'skip-link', 'data-act': 'skip-to-changes' }, 'Skip to changes'),
      slots.top,
      // Page order is keyboard order: the merge gate and the decision come before the changes.
      h(
        doc,
        'div',
        { class: 'columns' },
        slots.side,
        h(doc, 'div', { class: 'main-column' }, slots.before, changes, slots.after),
      ),
    );
    this.slots = slots;
    this.container.replaceChildren(root);
  }

  private teardown(): void {
    this.list?.dispose();
    this.list = null;
    this.slots = null;
    this.regions.clear();
  }

  /** Scrolls to a change and focuses its title button. */
  revealChange(changeId: number): boolean {
    if (!this.list) return false;
    const index = this.list.indexOf(changeId);
    const el = this.list.reveal(index);
    const button = el?.querySelector<HTMLElement>('.twisty');
    button?.focus({ preventScroll: true });
    return !!button;
  }

  /** Moves focus to the change `delta` places from the one holding focus (the feed pattern's Page Down and Page Up). */
  focusNeighbour(from: HTMLElement, delta: number): boolean {
    const article = from.closest<HTMLElement>('article.change');
    if (!article || !this.list) return false;
    const index = this.list.indexOf(Number(article.dataset.key));
    const target = index + delta;
    if (index < 0 || target < 0 || target >= this.list.count) return false;
    const el = this.list.reveal(target);
    el?.querySelector<HTMLElement>('.twisty')?.focus({ preventScroll: true });
    return !!el;
  }

  /** Re-reads the screen (after a scroll or resize). */
  screenChanged(): void {
    this.list?.onScreenChange();
  }

  /** Keeps "3 minutes ago" current without rendering anything again. */
  tickTimes(): void {
    const now = this.now();
    for (const el of this.container.querySelectorAll<HTMLElement>('time[data-rel]')) {
      const iso = el.getAttribute('datetime');
      if (iso) {
        const text = relativeTime(iso, now);
        if (el.textContent !== text) el.textContent = text;
      }
    }
  }
}
