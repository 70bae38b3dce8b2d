// The writes the webview asks for (comments and reviews), checked and sent to the service.
// Lifecycle buttons (panelAction) go through the commands instead, with their confirmations.
import type { Operation } from '../../contract/webview/protocol';
import type { ApiClient } from './api-client';
import { ApiError } from './api-error';

export type WriteOperation = Exclude<Operation, { type: 'panelAction' }>;
type WriteMethod =
  'createComment' | 'updateComment' | 'deleteComment' | 'createReview' | 'updateReview' | 'applySuggestions';
/** The client's writes, as far as this module uses them (their answers are not read). */
export type WriteClient = { [K in WriteMethod]: (...args: Parameters<ApiClient[K]>) => Promise<unknown> };

export async function performWrite(client: WriteClient, changeRequestId: number, op: WriteOperation): Promise<void> {
  switch (op.type) {
    case 'addComment': {
      const text = op.text.trim();
      if (!text) throw new ApiError('invalid', 'Write a comment first.');
      await client.createComment({
        change_request: changeRequestId,
        change_diff: op.changeDiff,
        text,
        parent: op.parent,
        attribute: op.attribute,
      });
      return;
    }
    case 'editComment': {
      const text = op.text.trim();
      if (!text) throw new ApiError('invalid', 'A comment cannot be empty; delete it instead.');
      await client.updateComment(op.commentId, { text });
      return;
    }
    case 'deleteComment':
      await client.deleteComment(op.commentId);
      return;
    case 'setResolved':
      await client.updateComment(op.commentId, { resolved: op.resolved });
      return;
    case 'applySuggestions':
      await client.applySuggestions(changeRequestId, op.commentIds);
      return;
    case 'submitReview': {
      const comment = op.comment.trim();
      if (op.decision === 'reject' && !comment)
        throw new ApiError('invalid', 'Requesting changes needs a comment saying what to change.');
      if (op.reviewId !== null) await client.updateReview(op.reviewId, { decision: op.decision, comment });
      else await client.createReview({ change_request: changeRequestId, decision: op.decision, comment });
      return;
    }
  }
}

/** What the operation did, for the log and a status message. */
export function describeOperation(op: Operation): string {
  switch (op.type) {
    case 'addComment':
      return op.parent === null ? 'Adding a comment' : 'Replying';
    case 'editComment':
      return 'Editing a comment';
    case 'deleteComment':
      return 'Deleting a comment';
    case 'setResolved':
      return op.resolved ? 'Resolving a thread' : 'Reopening a thread';
    case 'submitReview':
      return 'Submitting your review';
    case 'applySuggestions':
      return op.commentIds.length === 1 ? 'Applying a suggestion' : `Applying ${op.commentIds.length} suggestions`;
    case 'panelAction':
      return `Running ${op.action}`;
  }
}
