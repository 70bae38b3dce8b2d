// A small element builder for the renderers (no framework; the document is passed in so that
// the renderers run under jsdom in tests).
import { exactTime, relativeTime } from '../../contract/time';
export type Child = Node | string | number | null | undefined | false;
export type Attrs = Record<string, string | number | boolean | null | undefined>;

export function h<K extends keyof HTMLElementTagNameMap>(
  doc: Document,
  tag: K,
  attrs: Attrs = {},
  ...children: (Child | Child[])[]
): HTMLElementTagNameMap[K] {
  const el = doc.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    el.setAttribute(name, value === true ? '' : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    el.append(typeof child === 'number' ? String(child) : child);
  }
  return el;
}

/** A readable date-time for the user's locale (the ISO text when it does not parse). */
export function formatTime(iso: string | null): string {
  return iso ? exactTime(iso) : '';
}

/** A `<time>` showing how long ago (kept current by the view), with the exact time on hover. */
export function timeEl(doc: Document, iso: string | null, now: number): HTMLElement | null {
  if (!iso) return null;
  return h(doc, 'time', { datetime: iso, title: exactTime(iso), 'data-rel': '' }, relativeTime(iso, now));
}

/** An id usable in the DOM for any key (distinct keys give distinct ids). */
export function domId(key: string): string {
  return key.replace(/[^A-Za-z0-9_-]/g, (c) => (c === ':' ? '-' : `_${c.charCodeAt(0).toString(16)}_`));
}
