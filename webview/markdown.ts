// Markdown from the service (review and comment texts) rendered safely: markdown-it with raw
// HTML off, no images (they would fetch remote content), links limited to http, https and
// mailto; and then, as a second line of defence, an allowlist walk over the produced DOM. The
// service's own `*_html` fields are not used.
import MarkdownIt from 'markdown-it';

const SAFE_SCHEMES = /^(https?:|mailto:)/i;

export function isSafeLink(url: string): boolean {
  return SAFE_SCHEMES.test(url.trim());
}

const md = new MarkdownIt({ html: false, linkify: true, typographer: false, breaks: true });
md.disable(['image']);
md.validateLink = (url: string) => isSafeLink(url);

const ALLOWED_TAGS = new Set([
  'P',
  'BR',
  'STRONG',
  'EM',
  'CODE',
  'PRE',
  'BLOCKQUOTE',
  'UL',
  'OL',
  'LI',
  'A',
  'H1',
  'H2',
  'H3',
  'H4',
  'H5',
  'H6',
  'HR',
  'TABLE',
  'THEAD',
  'TBODY',
  'TR',
  'TH',
  'TD',
  'S',
  'DEL',
]);
const ALLOWED_ATTRIBUTES: Record<string, readonly string[]> = { A: ['href', 'title'], OL: ['start'] };

export function markdownToHtml(source: string): string {
  return md.render(source);
}

/** Removes every element and attribute outside the allowlist (children of a removed element are kept as text-bearing nodes). */
export function sanitizeTree(root: ParentNode): void {
  for (const el of [...root.querySelectorAll('*')]) {
    if (!el.isConnected && !root.contains(el)) continue;
    if (!ALLOWED_TAGS.has(el.tagName.toUpperCase())) {
      if (
        ['SCRIPT', 'STYLE', 'IFRAME', 'OBJECT', 'EMBED', 'TEMPLATE', 'SVG', 'MATH'].includes(el.tagName.toUpperCase())
      )
        el.remove();
      else el.replaceWith(...el.childNodes);
      continue;
    }
    const allowed = ALLOWED_ATTRIBUTES[el.tagName.toUpperCase()] ?? [];
    for (const attr of [...el.attributes]) {
      if (!allowed.includes(attr.name.toLowerCase())) el.removeAttribute(attr.name);
    }
    if (el.tagName.toUpperCase() === 'A') {
      const href = el.getAttribute('href');
      if (href === null || !isSafeLink(href)) el.removeAttribute('href');
      el.setAttribute('rel', 'noopener noreferrer');
    }
  }
}

/** A `div.markdown` holding the rendered, sanitised Markdown. */
export function renderMarkdown(doc: Document, source: string): HTMLElement {
  const template = doc.createElement('template');
  template.innerHTML = markdownToHtml(source);
  sanitizeTree(template.content);
  const box = doc.createElement('div');
  box.className = 'markdown';
  box.append(template.content);
  return box;
}
