import MarkdownIt from 'markdown-it';

/**
 * Markdown of reviews and comments rendered safely: raw HTML is escaped (never passed
 * through), and links or images may only use http(s), mailto or relative targets.
 */
const md = new MarkdownIt({ html: false, linkify: true, typographer: false });

const SAFE_LINK = /^(https?:|mailto:|#|\/(?!\/)|\.{0,2}\/)/i;
md.validateLink = (url: string): boolean => SAFE_LINK.test(url.trim()) || !/^[a-z][a-z0-9+.-]*:/i.test(url.trim());

const defaultLinkOpen = md.renderer.rules.link_open ?? ((tokens, idx, options, _env, self) => self.renderToken(tokens, idx, options));
md.renderer.rules.link_open = (tokens, idx, options, env, self) => {
  const token = tokens[idx]!;
  token.attrSet('rel', 'noopener noreferrer nofollow');
  return defaultLinkOpen(tokens, idx, options, env, self);
};

export function renderMarkdown(text: string): string {
  return md.render(text ?? '');
}
