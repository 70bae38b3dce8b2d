// The host checks every message from the webview before acting on it.
import * as z from 'zod';
import { REVIEW_DECISIONS } from '../../contract/api/vocabulary';
import { MAX_TEXT } from '../../contract/api/common';
import { PANEL_ACTIONS, type PersistedState, type WebviewToHost } from '../../contract/webview/protocol';

const id = z.number().int().positive();
const opId = z.string().min(1).max(100);
const text = z.string().max(MAX_TEXT);

export const webviewToHost: z.ZodType<WebviewToHost> = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('ready') }),
  z.strictObject({ type: z.literal('refresh') }),
  z.strictObject({ type: z.literal('openLink'), url: z.string().max(4000) }),
  z.strictObject({ type: z.literal('openDiff'), changeDiff: id }),
  z.strictObject({ type: z.literal('interacted') }),
  z.strictObject({ type: z.literal('compareWithMain'), changeDiff: id }),
  z.strictObject({ type: z.literal('openAllChanges') }),
  z.strictObject({
    type: z.literal('addComment'),
    opId,
    changeDiff: id,
    text,
    parent: id.nullable(),
    attribute: z.string().min(1).max(200).nullable(),
  }),
  z.strictObject({ type: z.literal('editComment'), opId, commentId: id, text }),
  z.strictObject({ type: z.literal('deleteComment'), opId, commentId: id }),
  z.strictObject({ type: z.literal('setResolved'), opId, commentId: id, resolved: z.boolean() }),
  z.strictObject({
    type: z.literal('submitReview'),
    opId,
    decision: z.enum(REVIEW_DECISIONS),
    comment: text,
    reviewId: id.nullable(),
  }),
  z.strictObject({ type: z.literal('applySuggestions'), opId, commentIds: z.array(id).min(1).max(1000) }),
  z.strictObject({ type: z.literal('panelAction'), opId, action: z.enum(PANEL_ACTIONS) }),
]);

/** A message from the webview, or null when it is not one the host understands. */
export function parseWebviewMessage(raw: unknown): WebviewToHost | null {
  const result = webviewToHost.safeParse(raw);
  return result.success ? result.data : null;
}

/** The change request id of a restored panel's saved state, or null. */
export function restoredChangeRequestId(state: unknown): number | null {
  const result = z.looseObject({ changeRequestId: id }).safeParse(state);
  return result.success ? (result.data as Pick<PersistedState, 'changeRequestId'>).changeRequestId : null;
}
