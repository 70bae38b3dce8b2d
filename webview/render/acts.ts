// What a click on an element with `data-act` means (webview/main.ts dispatches on these).
export const ACTS = [
  'open-composer', // data-key; data-text (initial text, for edits)
  'close-composer', // data-key
  'send', // data-key: sends the composer's operation
  'delete-comment', // data-comment
  'resolve', // data-comment, data-resolved ("true" | "false")
  'panel-action', // data-action (PanelAction)
  'toggle-attrs', // data-change
  'open-link', // data-url
  'refresh',
] as const;
export type Act = (typeof ACTS)[number];

export function isAct(value: string | undefined): value is Act {
  return value !== undefined && (ACTS as readonly string[]).includes(value);
}
