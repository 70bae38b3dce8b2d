import assert from 'node:assert/strict';
import { contentSecurityPolicy, makeNonce, panelHtml } from '../../extension/core/webview-html';
import { isOpenableLink } from '../../extension/core/links';
import { parseWebviewMessage, restoredChangeRequestId } from '../../extension/core/webview-messages';
import type { WebviewToHost } from '../../contract/webview/protocol';

describe('extension: the webview boundary', () => {
  it('accepts every message the webview may send', () => {
    const messages: WebviewToHost[] = [
      { type: 'ready' },
      { type: 'refresh' },
      { type: 'openLink', url: 'https://ci.example/1' },
      { type: 'openDiff', changeDiff: 11 },
      { type: 'openAllChanges' },
      { type: 'addComment', opId: 'op-1', changeDiff: 11, text: 'Why?', parent: null, attribute: null },
      {
        type: 'addComment',
        opId: 'op-2',
        changeDiff: 11,
        text: 'Because.',
        parent: 5,
        attribute: 'custom_fields.owner',
      },
      { type: 'editComment', opId: 'op-3', commentId: 5, text: 'x' },
      { type: 'deleteComment', opId: 'op-4', commentId: 5 },
      { type: 'setResolved', opId: 'op-5', commentId: 5, resolved: true },
      { type: 'submitReview', opId: 'op-6', decision: 'reject', comment: 'No.', reviewId: null },
      { type: 'panelAction', opId: 'op-7', action: 'return_to_draft' },
      { type: 'applySuggestions', opId: 'op-8', commentIds: [5, 6] },
    ];
    for (const m of messages) assert.deepEqual(parseWebviewMessage(m), m, m.type);
  });

  it('ignores anything else', () => {
    for (const bad of [
      null,
      'ready',
      {},
      { type: 'nope' },
      { type: 'ready', extra: 1 },
      { type: 'deleteComment', opId: 'x', commentId: -1 },
      { type: 'panelAction', opId: 'x', action: 'drop_database' },
      { type: 'openDiff', changeDiff: 0 },
      { type: 'openDiff', changeDiff: '11' },
      { type: 'openAllChanges', changeRequest: 1 },
      { type: 'addComment', opId: 'x', changeDiff: 1, text: 'a', parent: null },
      { type: 'addComment', opId: 'x', changeDiff: 1, text: 'a', parent: null, attribute: '' },
      { type: 'addComment', opId: 'x', changeDiff: 1, text: 'a', parent: null, attribute: 'x'.repeat(201) },
      { type: 'submitReview', opId: 'x', decision: 'maybe', comment: '', reviewId: null },
      { type: 'applySuggestions', opId: 'x', commentIds: [] },
      { type: 'applySuggestions', opId: 'x', commentIds: [0] },
      { type: 'applySuggestions', opId: 'x', commentIds: [1], force: true },
    ]) {
      assert.equal(parseWebviewMessage(bad), null, JSON.stringify(bad));
    }
  });

  it('opens only http, https and mailto links', () => {
    assert.equal(isOpenableLink('https://ci.example/run/1'), true);
    assert.equal(isOpenableLink('mailto:noc@example.com'), true);
    for (const bad of [
      'javascript:alert(1)',
      'command:workbench.action.terminal.new',
      'file:///etc/passwd',
      'vscode://x',
      'not a url',
    ])
      assert.equal(isOpenableLink(bad), false, bad);
  });

  it('reads the change request of a restored panel from the saved state', () => {
    assert.equal(restoredChangeRequestId({ changeRequestId: 4, drafts: {} }), 4);
    assert.equal(restoredChangeRequestId(undefined), null);
    assert.equal(restoredChangeRequestId({ changeRequestId: '4' }), null);
  });

  it('serves the panel under a strict Content-Security-Policy with a nonce script and no network', () => {
    const nonce = makeNonce();
    assert.match(nonce, /^[A-Za-z0-9]{16,}$/);
    assert.notEqual(makeNonce(), nonce);
    const csp = contentSecurityPolicy('https://file+.vscode-resource.test', nonce);
    assert.match(csp, /^default-src 'none'; /);
    assert.match(csp, /connect-src 'none'/);
    assert.match(csp, new RegExp(`script-src 'nonce-${nonce}'`));
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval|\*/);
    const html = panelHtml({
      cspSource: 'https://file+.vscode-resource.test',
      scriptUri: 'https://r/dist/webview.js',
      styleUri: 'https://r/dist/webview.css',
      nonce,
      title: '<b>Move "sw1"</b>',
    });
    assert.ok(html.includes(`<script nonce="${nonce}" src="https://r/dist/webview.js"></script>`));
    assert.ok(html.includes('<title>&#60;b&#62;Move &#34;sw1&#34;&#60;/b&#62;</title>'));
    assert.equal((html.match(/<script/g) ?? []).length, 1);
    assert.doesNotMatch(html, /style=|<style/);
  });
});
