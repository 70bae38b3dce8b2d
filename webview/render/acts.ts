// What a click on an element with `data-act` means (webview/controller.ts dispatches on these).
export const ACTS = [
  'open-composer', // data-key; data-text (initial text, for edits)
  'close-composer', // data-key
  'send', // data-key: sends the composer's operation
  'delete-comment', // data-comment
  'resolve', // data-comment, data-resolved ("true" | "false")
  'apply-suggestions', // data-comments (ids, comma-separated), data-key (applyKey or APPLY_ALL_KEY)
  'panel-action', // data-action (PanelAction)
  'toggle-attrs', // data-change
  'toggle-collapse', // data-change: folds or unfolds one change
  'collapse-all',
  'expand-all',
  'open-diff', // data-change: the change in VS Code's diff editor
  'compare-with-main', // data-change: the change against main as it is now (a conflicting object)
  'open-all', // every change in one multi-diff editor
  'reveal-change', // data-change: scrolls the list to that change and focuses it
  'show-more-timeline',
  'skip-to-changes',
  'open-link', // data-url
  'refresh',
] as const;
export type Act = (typeof ACTS)[number];

export function isAct(value: string | undefined): value is Act {
  return value !== undefined && (ACTS as readonly string[]).includes(value);
}
