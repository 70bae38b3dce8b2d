import assert from 'node:assert/strict';
import { JSDOM } from 'jsdom';
import { isSafeLink, markdownToHtml, renderMarkdown } from '../../webview/markdown';

const doc = () => new JSDOM('<!DOCTYPE html><body></body>').window.document;

describe('webview: Markdown rendered safely', () => {
  it('renders ordinary Markdown', () => {
    const box = renderMarkdown(
      doc(),
      '**VLAN 20** is wrong, see [the plan](https://wiki.example/plan).\n\n- one\n- `two`',
    );
    assert.equal(box.className, 'markdown');
    assert.equal(box.querySelector('strong')!.textContent, 'VLAN 20');
    const a = box.querySelector('a')!;
    assert.equal(a.getAttribute('href'), 'https://wiki.example/plan');
    assert.equal(a.getAttribute('rel'), 'noopener noreferrer');
    assert.equal(box.querySelectorAll('li').length, 2);
    assert.equal(box.querySelector('code')!.textContent, 'two');
  });

  it('renders hostile Markdown inert: no markup, no script, no event handler, no dangerous link, no image', () => {
    const hostile = [
      '<script>alert(1)</script>',
      '<img src=x onerror="alert(2)">',
      '<a href="javascript:alert(3)">raw</a>',
      '[click](javascript:alert(4))',
      '[data](data:text/html;base64,PHNjcmlwdD5hbGVydCg1KTwvc2NyaXB0Pg==)',
      '[vb](vbscript:msgbox)',
      '[cmd](command:workbench.action.terminal.new)',
      '[file](file:///etc/passwd)',
      '<javascript:alert(6)>',
      '![tracker](https://evil.example/pixel.png)',
      '<iframe src="https://evil.example"></iframe>',
      '<style>body{display:none}</style>',
      '<svg onload=alert(7)>',
      '[x](  JaVaScRiPt:alert(8))',
    ].join('\n\n');
    const d = doc();
    const box = renderMarkdown(d, hostile);
    d.body.append(box);
    for (const tag of ['script', 'img', 'iframe', 'style', 'svg', 'object', 'embed'])
      assert.equal(box.querySelectorAll(tag).length, 0, tag);
    for (const el of box.querySelectorAll('*')) {
      for (const attr of el.attributes) assert.doesNotMatch(attr.name, /^on/i, `${el.tagName} has ${attr.name}`);
    }
    for (const a of box.querySelectorAll('a')) {
      const href = a.getAttribute('href');
      assert.ok(href === null || /^https?:|^mailto:/.test(href), `link to ${href}`);
    }
    // The raw HTML shows as text, so the reader sees what was written.
    assert.match(box.textContent!, /<script>alert\(1\)<\/script>/);
    assert.doesNotMatch(box.innerHTML, /<(script|img|iframe|svg|style|object|embed)\b/i);
  });

  it('removes elements and attributes outside the allowlist even if the renderer produced them', () => {
    assert.doesNotMatch(markdownToHtml('<b onclick="x()">hi</b>'), /<b/);
    assert.equal(isSafeLink('https://x'), true);
    assert.equal(isSafeLink(' mailto:a@b'), true);
    assert.equal(isSafeLink('javascript:x'), false);
    assert.equal(isSafeLink('/relative'), false);
  });
});
