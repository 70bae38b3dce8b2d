// The page under jsdom with a large review: only the changes on screen are in the DOM, and a
// refresh touches only what changed, keeping focus, caret and drafts.
import assert from 'node:assert/strict';
import { JSDOM } from 'jsdom';
import { PanelController, type WebviewApi } from '../../webview/controller';
import type { ChangeRequestSnapshot, WebviewToHost } from '../../contract/webview/protocol';
import { makeCheck, makeComment } from '../extension/fixtures';
import { largeReviewSnapshot } from '../support/review-snapshot';

function setup(snapshot: ChangeRequestSnapshot) {
  const dom = new JSDOM('<!DOCTYPE html><body><div id="root"></div></body>');
  dom.window.scrollTo = () => {};
  const doc = dom.window.document;
  const posted: WebviewToHost[] = [];
  const api: WebviewApi = { postMessage: (m) => posted.push(m), getState: () => undefined, setState: () => {} };
  const root = doc.getElementById('root')!;
  const controller = new PanelController(doc, root, api, { now: () => Date.parse('2026-11-01T11:00:00Z') });
  controller.receive({ type: 'snapshot', snapshot });
  const $ = (sel: string) => {
    const el = root.querySelector<HTMLElement>(sel);
    assert.ok(el, `no ${sel}`);
    return el;
  };
  /** Every change of the DOM made while `fn` runs. */
  const mutations = (fn: () => void) => {
    const observer = new dom.window.MutationObserver(() => {});
    observer.observe(root, { subtree: true, childList: true, attributes: true, characterData: true });
    fn();
    const records = observer.takeRecords();
    observer.disconnect();
    return records;
  };
  return { dom, doc, root, posted, controller, $, mutations };
}

const articles = (root: HTMLElement) => [...root.querySelectorAll<HTMLElement>('article.change')];

describe('webview: a large review, rendered as it is scrolled and updated in place', () => {
  const big = largeReviewSnapshot(2000);

  it('puts only the changes on screen in the DOM, and keeps the list as tall as all of them', () => {
    const t = setup(big);
    const shown = articles(t.root);
    assert.ok(shown.length > 0 && shown.length < 30, `${shown.length} changes rendered`);
    assert.equal(shown[0]!.getAttribute('aria-posinset'), '1');
    assert.equal(shown[0]!.getAttribute('aria-setsize'), '2000');
    const [top, bottom] = [...t.root.querySelectorAll<HTMLElement>('.change-list > .spacer')];
    assert.equal(top!.style.height, '0px');
    assert.ok(parseFloat(bottom!.style.height) > 100_000, `bottom spacer ${bottom!.style.height}`);
    assert.ok(t.root.querySelectorAll('*').length < 3000, `${t.root.querySelectorAll('*').length} elements`);
  });

  it('renders the changes that scroll into view, and drops those that leave', () => {
    const t = setup(big);
    const list = t.$('.change-list');
    list.getBoundingClientRect = () => ({
      top: -60_000,
      bottom: 0,
      left: 0,
      right: 0,
      width: 0,
      height: 0,
      x: 0,
      y: 0,
      toJSON() {},
    });
    t.controller.view.screenChanged();
    const shown = articles(t.root);
    const first = Number(shown[0]!.getAttribute('aria-posinset'));
    assert.ok(first > 100, `first rendered change #${first}`);
    assert.ok(shown.length < 30);
    assert.equal(t.root.querySelector('[aria-posinset="1"]'), null);
  });

  it('applies an identical refresh without touching the DOM', () => {
    const t = setup(big);
    const records = t.mutations(() => t.controller.receive({ type: 'snapshot', snapshot: structuredClone(big) }));
    assert.deepEqual(
      records.map((r) => (r.target as Element).id || (r.target as Element).className),
      [],
    );
  });

  it('applies a refresh by replacing only the changes and regions that differ', () => {
    const t = setup(big);
    const before = {
      first: t.$('#change-1'),
      second: t.$('#change-2'),
      header: t.$('#cr-header'),
      approval: t.$('#approval'),
      checks: t.$('#checks'),
      timeline: t.$('#timeline'),
    };
    const next = structuredClone(big);
    next.changes[1] = { ...next.changes[1]!, modified: { ...next.changes[1]!.modified, status: 'offline' } };
    next.checks[0] = makeCheck({
      id: 1,
      name: 'ci/build',
      label: 'CI build',
      status: 'success',
      completed: '2026-11-01T10:59:00.000Z',
    });
    t.controller.receive({ type: 'snapshot', snapshot: next });
    assert.equal(t.$('#change-1'), before.first, 'an unchanged change keeps its element');
    assert.notEqual(t.$('#change-2'), before.second);
    assert.match(t.$('#change-2 [data-attr=status]').textContent!, /offline/);
    assert.equal(t.$('#cr-header'), before.header);
    assert.equal(t.$('#approval'), before.approval);
    assert.notEqual(t.$('#checks'), before.checks);
    assert.notEqual(t.$('#timeline'), before.timeline, 'the check result joins the timeline');
  });

  it('keeps focus, caret and the typed draft when a refresh changes the change being commented on', () => {
    const t = setup(big);
    t.$('#comment-on-1').click();
    const ta = t.$('#ta-comment-1') as HTMLTextAreaElement;
    ta.value = 'Half a sentence';
    ta.dispatchEvent(new t.dom.window.Event('input', { bubbles: true }));
    ta.focus();
    ta.setSelectionRange(5, 9);
    const next = structuredClone(big);
    next.comments.push(makeComment({ id: 99_001, change_diff: 1, text: 'Someone else just commented.' }));
    t.controller.receive({ type: 'loading', changeRequestId: 1 });
    t.controller.receive({ type: 'snapshot', snapshot: next });
    const again = t.$('#ta-comment-1') as HTMLTextAreaElement;
    assert.notEqual(again, ta, 'the change was rendered again');
    assert.match(t.$('#change-1').textContent!, /Someone else just commented/);
    assert.equal(t.doc.activeElement, again);
    assert.equal(again.value, 'Half a sentence');
    assert.deepEqual([again.selectionStart, again.selectionEnd], [5, 9]);
  });

  it('updates only the one change when it is folded', () => {
    const t = setup(big);
    const second = t.$('#change-2');
    const records = t.mutations(() => t.$('#toggle-1').click());
    const touched = new Set(
      records.map(
        (r) =>
          (r.target as HTMLElement).closest?.('article.change, .spacer, .change-list')?.className ??
          (r.target as HTMLElement).className,
      ),
    );
    assert.ok(
      [...touched].every((c) => /change-list|spacer/.test(c)),
      [...touched].join(', '),
    );
    assert.equal(t.root.querySelector('#change-1 .change-body'), null);
    assert.equal(t.$('#change-2'), second);
  });

  it('moves between changes with Page Down and Page Up', () => {
    const t = setup(big);
    t.$('#toggle-1').focus();
    t.$('#toggle-1').dispatchEvent(new t.dom.window.KeyboardEvent('keydown', { key: 'PageDown', bubbles: true }));
    assert.equal(t.doc.activeElement?.id, 'toggle-2');
    t.$('#toggle-2').dispatchEvent(new t.dom.window.KeyboardEvent('keydown', { key: 'PageUp', bubbles: true }));
    assert.equal(t.doc.activeElement?.id, 'toggle-1');
  });
});
