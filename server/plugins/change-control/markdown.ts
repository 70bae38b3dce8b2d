import MarkdownIt from 'markdown-it';

/**
 * Markdown of reviews and comments rendered safely: raw HTML is escaped (never passed
 * through), links may only use http(s), mailto or relative targets, and nothing loads a
 * remote resource: an image becomes a link to it (its text the image's alt text), so reading
 * a comment tells its writer nothing.
 */
const md = new MarkdownIt({ html: false, linkify: true, typographer: false });

const SAFE_SCHEMES = new Set(['http', 'https', 'mailto']);
/** Characters a browser's URL parser strips or ignores inside a scheme (controls, spaces). */
const IGNORED = /[\u0000-\u0020\u007f-\u009f]/g;

function schemeOf(url: string): string | null {
  const m = /^([a-z][a-z0-9+.-]*):/i.exec(url);
  return m ? m[1]!.toLowerCase() : null;
}

function percentDecoded(url: string): string {
  try {
    return decodeURIComponent(url);
  } catch {
    return url;
  }
}

/**
 * A link or image target is allowed when it has no scheme (relative, fragment) or a safe one;
 * the target is also judged percent-decoded and without the characters URL parsing ignores,
 * so `java%0Ascript:` or ` javascript:` cannot slip through as a relative link.
 */
md.validateLink = (url: string): boolean =>
  [url, percentDecoded(url)].every((candidate) => {
    const scheme = schemeOf(candidate.replace(IGNORED, ''));
    return scheme === null || SAFE_SCHEMES.has(scheme);
  });

const defaultLinkOpen =
  md.renderer.rules.link_open ?? ((tokens, idx, options, _env, self) => self.renderToken(tokens, idx, options));
md.renderer.rules.link_open = (tokens, idx, options, env, self) => {
  const token = tokens[idx]!;
  token.attrSet('rel', 'noopener noreferrer nofollow');
  return defaultLinkOpen(tokens, idx, options, env, self);
};

md.renderer.rules.image = (tokens, idx, options, env, self) => {
  const token = tokens[idx]!;
  const src = token.attrGet('src') ?? '';
  const alt = self.renderInlineAsText(token.children ?? [], options, env);
  const text = md.utils.escapeHtml(alt || src);
  // Inside a link already: the words only (a link cannot hold another).
  let open = 0;
  for (let i = 0; i < idx; i++) open += tokens[i]!.type === 'link_open' ? 1 : tokens[i]!.type === 'link_close' ? -1 : 0;
  if (open > 0) return text;
  return `<a href="${md.utils.escapeHtml(src)}" rel="noopener noreferrer nofollow">${text}</a>`;
};

/**
 * Texts rendered lately, by their source (the rendering depends on nothing else), least recently
 * used first: a comment read again is not parsed again. Bounded in entries and characters (a
 * few megabytes at most); texts longer than a page are rendered each time.
 */
const rendered = new Map<string, string>();
const KEPT_ENTRIES = 4096;
const KEPT_CHARS = 1_000_000;
const KEPT_TEXT_CHARS = 8192;
let keptChars = 0;

export function renderMarkdown(text: string): string {
  const source = text ?? '';
  if (source === '') return '';
  const kept = rendered.get(source);
  if (kept !== undefined) {
    rendered.delete(source);
    rendered.set(source, kept);
    return kept;
  }
  const html = md.render(source);
  if (source.length <= KEPT_TEXT_CHARS) {
    rendered.set(source, html);
    keptChars += source.length + html.length;
    while (rendered.size > KEPT_ENTRIES || keptChars > KEPT_CHARS) {
      const [oldest, oldHtml] = rendered.entries().next().value!;
      rendered.delete(oldest);
      keptChars -= oldest.length + oldHtml.length;
    }
  }
  return html;
}

/** How many rendered texts are kept and their characters (source and HTML): for the tests of the bound. */
export function renderedKept(): { entries: number; chars: number } {
  return { entries: rendered.size, chars: keptChars };
}
