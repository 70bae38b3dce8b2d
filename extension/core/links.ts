// The links the extension opens in the browser, wherever they come from (the webview, a check's
// details URL): http, https and mailto only.

/** Whether the extension may open this link (never `command:`, `file:`, `javascript:` or the like). */
export function isOpenableLink(url: string): boolean {
  try {
    return ['http:', 'https:', 'mailto:'].includes(new URL(url).protocol);
  } catch {
    return false;
  }
}
