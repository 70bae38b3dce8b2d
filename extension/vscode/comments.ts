// Comment threads in the gutter of changed objects' documents: one CommentController showing the
// threads of each request the editor follows (core/comment-threads.ts places them), and the
// actions of the comment widget: add a comment or start a review on any line (the attribute is
// the key path of that line), reply, edit and delete one's own comments, resolve and reopen, and
// pending review drafts (kept in UserState until Submit Review posts them).
import * as vscode from 'vscode';
import type { ChangeComment } from '../../contract/api/change-control';
import { ApiError, asApiError } from '../core/api-error';
import { parseValue, suggestionBlock, valueAsInput, valueAt } from '../core/suggestions';
import {
  attributeAtLine,
  attributeSpans,
  commentableSide,
  objectKey,
  serializeState,
  sideState,
} from '../core/change-documents';
import { buildThreads, type CommentView, type ThreadView } from '../core/comment-threads';
import { CONTEXT_KEYS, COMMENT_CONTROLLER } from '../core/commands';
import { postingBlockedReason } from '../core/connection-state';
import { addDraft, editDraft, isReviewing, removeDraft, startReview } from '../core/pending-review';
import type { RequestDataCache } from '../core/request-data';
import { changeUri, refOf } from './change-documents';
import type { Connection } from './connection';
import { DisposableBase } from './disposable';
import type { ErrorReporter } from './errors';
import type { UserState } from './user-state';

export class ReviewComment implements vscode.Comment {
  body: vscode.MarkdownString | string;
  mode = vscode.CommentMode.Preview;
  author: vscode.CommentAuthorInformation;
  contextValue: string;
  label: string | undefined;
  timestamp: Date;

  constructor(
    public view: CommentView,
    readonly changeRequestId: number,
    public thread: vscode.CommentThread | undefined,
  ) {
    this.body = markdown(shownText(view));
    this.author = { name: view.author };
    this.contextValue = view.contextValue;
    this.label = view.label;
    this.timestamp = new Date(view.timestamp);
  }

  update(view: CommentView): void {
    this.view = view;
    this.author = { name: view.author };
    this.contextValue = view.contextValue;
    this.label = view.label;
    this.timestamp = new Date(view.timestamp);
    if (this.mode === vscode.CommentMode.Preview) this.body = markdown(shownText(view));
  }
}

/** A comment as its thread shows it: its text, and the suggested change it carries under it. */
function shownText(view: CommentView): string {
  return view.suggestion ? `${view.text}\n\n${view.suggestion}` : view.text;
}

/** Markdown as VS Code renders it, untrusted: no command links, no raw HTML, no theme icons. */
export function markdown(text: string): vscode.MarkdownString {
  const md = new vscode.MarkdownString(text, false);
  md.isTrusted = false;
  md.supportHtml = false;
  return md;
}

interface Shown {
  thread: vscode.CommentThread;
  view: ThreadView;
  uri: string;
}

export interface CommentDeps {
  cache: RequestDataCache;
  connection: Connection;
  userState: UserState;
  reporter: ErrorReporter;
  log: vscode.LogOutputChannel;
}

export class ReviewComments extends DisposableBase {
  private readonly controller: vscode.CommentController;
  /** Shown threads by `<request id>/<thread key>`. */
  private readonly shown = new Map<string, Shown>();
  private readonly ours = new WeakMap<vscode.CommentThread, { changeRequestId: number; key: string }>();

  constructor(private readonly deps: CommentDeps) {
    super();
    this.controller = this._register(vscode.comments.createCommentController(COMMENT_CONTROLLER, 'Change Control'));
    this.setOptions();
    // Offline, the widget says why Add Comment is disabled (Start Review keeps comments pending meanwhile).
    this._register(deps.connection.onDidChange(() => this.setOptions()));
    this.controller.commentingRangeProvider = { provideCommentingRanges: (doc) => this.commentingRanges(doc) };
    this._register(
      deps.cache.onDidChange((id, parts) => {
        if (parts.has('comments') || parts.has('changes') || parts.has('request')) this.render(id);
      }),
    );
    this._register(
      deps.userState.onDidChangePending((id) => {
        if (id === undefined) for (const tracked of deps.cache.tracked()) this.render(tracked);
        else this.render(id);
        void this.updateContext();
      }),
    );
    this._register(vscode.window.onDidChangeActiveTextEditor(() => void this.updateContext()));
    this._register({ dispose: () => this.removeAll() });
    void this.updateContext();
  }

  private setOptions(): void {
    const blocked = postingBlockedReason(this.deps.connection.state);
    this.controller.options = blocked
      ? {
          placeHolder: `${blocked} Add Review Comment keeps this comment pending until Submit Review.`,
          prompt: 'Offline, reconnecting…',
        }
      : { placeHolder: 'Comment on this attribute (Markdown)…', prompt: 'Comment on this line' };
  }

  // ------------------------------------------------------------------ showing

  private async commentingRanges(doc: vscode.TextDocument): Promise<vscode.Range[]> {
    const ref = refOf(doc.uri);
    if (ref?.kind !== 'change' || !commentableSide(ref.side) || doc.lineCount === 0 || !doc.getText().trim()) return [];
    const data = await this.deps.cache.ensure(ref.changeRequestId).catch(() => undefined);
    if (!data?.changeRequest.actions.comment?.allowed) return [];
    return [new vscode.Range(0, 0, doc.lineCount - 1, 0)];
  }

  /** Shows the threads of a request as its data and the user's drafts are now. */
  render(changeRequestId: number): void {
    const data = this.deps.cache.get(changeRequestId);
    const me = this.deps.connection.user;
    if (!data || !me) {
      this.removeRequest(changeRequestId);
      return;
    }
    const drafts = this.deps.userState.pendingReview(changeRequestId)?.drafts ?? [];
    const views = buildThreads({
      comments: data.comments,
      drafts,
      changes: data.changes,
      me: { id: me.id, display: me.display || me.username },
      canApply: data.changeRequest.actions.apply_suggestions?.allowed ?? false,
    });
    const canReply = data.changeRequest.actions.comment?.allowed ?? false;
    const seen = new Set<string>();
    for (const view of views) {
      if (!view.place) continue;
      const id = `${changeRequestId}/${view.key}`;
      seen.add(id);
      const uri = changeUri(changeRequestId, view.place.side, view.place.change);
      const range = new vscode.Range(view.place.line, 0, view.place.line, 0);
      let shown = this.shown.get(id);
      if (shown && shown.uri !== uri.toString()) {
        shown.thread.dispose();
        shown = undefined;
      }
      if (!shown) {
        const thread = this.controller.createCommentThread(uri, range, []);
        thread.collapsibleState =
          view.resolved || view.outdated
            ? vscode.CommentThreadCollapsibleState.Collapsed
            : vscode.CommentThreadCollapsibleState.Expanded;
        this.ours.set(thread, { changeRequestId, key: view.key });
        shown = { thread, view, uri: uri.toString() };
        this.shown.set(id, shown);
      }
      this.apply(shown, view, range, canReply, changeRequestId);
    }
    for (const [id, shown] of this.shown) {
      if (id.startsWith(`${changeRequestId}/`) && !seen.has(id)) {
        shown.thread.dispose();
        this.shown.delete(id);
      }
    }
  }

  private apply(shown: Shown, view: ThreadView, range: vscode.Range, canReply: boolean, changeRequestId: number): void {
    const thread = shown.thread;
    shown.view = view;
    if (!thread.range || !thread.range.isEqual(range)) thread.range = range;
    const existing = new Map(thread.comments.map((c) => [(c as ReviewComment).view.key, c as ReviewComment]));
    thread.comments = view.comments.map((c) => {
      const known = existing.get(c.key);
      if (known) {
        known.update(c);
        return known;
      }
      return new ReviewComment(c, changeRequestId, thread);
    });
    thread.label = view.label;
    thread.contextValue = view.contextValue;
    thread.state = view.resolved ? vscode.CommentThreadState.Resolved : vscode.CommentThreadState.Unresolved;
    thread.canReply = canReply;
  }

  private removeRequest(changeRequestId: number): void {
    for (const [id, shown] of this.shown) {
      if (!id.startsWith(`${changeRequestId}/`)) continue;
      shown.thread.dispose();
      this.shown.delete(id);
    }
  }

  private removeAll(): void {
    for (const shown of this.shown.values()) shown.thread.dispose();
    this.shown.clear();
  }

  /** Re-renders every followed request (e.g. after signing in as someone else). */
  renderAll(): void {
    this.removeAll();
    for (const id of this.deps.cache.tracked()) this.render(id);
  }

  /** Threads whose change is no longer in the branch (kept, shown in the Changed Objects tree). */
  orphans(changeRequestId: number): ThreadView[] {
    const data = this.deps.cache.get(changeRequestId);
    const me = this.deps.connection.user;
    if (!data || !me) return [];
    const drafts = this.deps.userState.pendingReview(changeRequestId)?.drafts ?? [];
    return buildThreads({
      comments: data.comments,
      drafts,
      changes: data.changes,
      me: { id: me.id, display: me.display },
    }).filter((t) => !t.place);
  }

  /** The request the active editor shows, if it is one of ours. */
  activeRequest(): number | undefined {
    const uri = vscode.window.activeTextEditor?.document.uri;
    const ref = uri ? refOf(uri) : null;
    return ref?.changeRequestId;
  }

  private async updateContext(): Promise<void> {
    await vscode.commands.executeCommand(
      'setContext',
      CONTEXT_KEYS.reviewing,
      isReviewing(this.deps.userState.pendingReviews(), this.activeRequest()),
    );
  }

  // ------------------------------------------------------------------ the comment widget's actions

  /** Where a reply goes: its request and change, and the thread (posted root or pending root) or the new thread's attribute. */
  private target(reply: vscode.CommentReply): {
    changeRequestId: number;
    changeDiff: number;
    parent: number | null;
    parentDraft: string | null;
    attribute: string | null;
  } {
    const known = this.ours.get(reply.thread);
    if (known) {
      const shown = this.shown.get(`${known.changeRequestId}/${known.key}`);
      if (!shown || shown.view.changeDiff === null)
        throw new ApiError('invalid', 'This thread is no longer shown; refresh and try again.');
      return {
        changeRequestId: known.changeRequestId,
        changeDiff: shown.view.changeDiff,
        parent: shown.view.rootId,
        parentDraft: shown.view.rootDraft,
        attribute: null,
      };
    }
    const ref = refOf(reply.thread.uri);
    if (ref?.kind !== 'change' || !commentableSide(ref.side))
      throw new ApiError('invalid', 'Comments go on the baseline or the branch side of a changed object.');
    const data = this.deps.cache.get(ref.changeRequestId);
    const change = data?.byObject.get(objectKey({ object_type: ref.objectType, object_id: ref.objectId }));
    if (!change)
      throw new ApiError(
        'invalid',
        'This object is no longer among the changes of the request; refresh and try again.',
      );
    const line = reply.thread.range?.start.line ?? 0;
    const attribute = attributeAtLine(attributeSpans(serializeState(sideState(change, ref.side))), line);
    return { changeRequestId: ref.changeRequestId, changeDiff: change.id, parent: null, parentDraft: null, attribute };
  }

  private isNew(thread: vscode.CommentThread): boolean {
    return !this.ours.has(thread);
  }

  /** Posts a comment now (a new thread or a reply). */
  async addComment(reply: vscode.CommentReply): Promise<void> {
    const text = reply.text.trim();
    if (!text) return;
    const t = this.target(reply);
    if (t.parentDraft !== null) {
      // The thread itself is still pending: the reply joins the review.
      await this.addDraft(reply, t);
      return;
    }
    const client = this.deps.connection.client;
    if (!client) throw new ApiError('signedOut', 'Not signed in.');
    const created = await client.createComment({
      change_request: t.changeRequestId,
      change_diff: t.changeDiff,
      text,
      parent: t.parent,
      attribute: t.parent === null ? t.attribute : undefined,
    });
    this.deps.log.info(
      `comment ${created.id} posted on change ${t.changeDiff}${created.attribute ? ` (${created.attribute})` : ''}`,
    );
    if (this.isNew(reply.thread)) reply.thread.dispose();
    await this.reloadComments(t.changeRequestId, created);
  }

  /** Starts the request's pending review and keeps this comment in it. */
  async startReview(reply: vscode.CommentReply): Promise<void> {
    const t = this.target(reply);
    await this.deps.userState.updatePending(t.changeRequestId, (all) =>
      startReview(all, t.changeRequestId, new Date()),
    );
    await this.addDraft(reply, t);
  }

  /** Keeps this comment in the request's pending review (started if it has none yet). */
  async addReviewComment(reply: vscode.CommentReply): Promise<void> {
    const t = this.target(reply);
    await this.deps.userState.updatePending(t.changeRequestId, (all) =>
      startReview(all, t.changeRequestId, new Date()),
    );
    await this.addDraft(reply, t);
  }

  private async addDraft(reply: vscode.CommentReply, t: ReturnType<ReviewComments['target']>): Promise<void> {
    const text = reply.text.trim();
    if (!text) return;
    await this.deps.userState.updatePending(
      t.changeRequestId,
      (all) =>
        addDraft(
          all,
          t.changeRequestId,
          { changeDiff: t.changeDiff, attribute: t.attribute, parent: t.parent, parentDraft: t.parentDraft, text },
          new Date(),
        ).all,
    );
    if (this.isNew(reply.thread)) reply.thread.dispose();
  }

  private async reloadComments(changeRequestId: number, created?: ChangeComment): Promise<void> {
    if (created) {
      // Shown at once; the reload confirms it (and brings anything else new).
      const data = this.deps.cache.get(changeRequestId);
      if (data && !data.comments.some((c) => c.id === created.id)) {
        data.comments = [...data.comments, created];
        this.render(changeRequestId);
      }
    }
    await this.deps.cache.reload(changeRequestId, ['comments']);
  }

  startEdit(comment: ReviewComment): void {
    if (!comment.thread) return;
    comment.mode = vscode.CommentMode.Editing;
    comment.body = comment.view.text;
    comment.thread.comments = [...comment.thread.comments];
  }

  cancelEdit(comment: ReviewComment): void {
    if (!comment.thread) return;
    comment.mode = vscode.CommentMode.Preview;
    comment.body = markdown(shownText(comment.view));
    comment.thread.comments = [...comment.thread.comments];
  }

  async saveEdit(comment: ReviewComment): Promise<void> {
    const text = (typeof comment.body === 'string' ? comment.body : comment.body.value).trim();
    if (!text) throw new ApiError('invalid', 'A comment cannot be empty; delete it instead.');
    if (comment.view.draftKey) {
      const key = comment.view.draftKey;
      await this.deps.userState.updatePending(comment.changeRequestId, (all) =>
        editDraft(all, comment.changeRequestId, key, text),
      );
    } else if (comment.view.id !== null) {
      const client = this.deps.connection.client;
      if (!client) throw new ApiError('signedOut', 'Not signed in.');
      await client.updateComment(comment.view.id, { text });
    }
    comment.mode = vscode.CommentMode.Preview;
    comment.view = { ...comment.view, text };
    comment.body = markdown(shownText(comment.view));
    if (comment.thread) comment.thread.comments = [...comment.thread.comments];
    if (comment.view.id !== null) await this.reloadComments(comment.changeRequestId);
  }

  async delete(comment: ReviewComment): Promise<void> {
    const pending = comment.view.draftKey !== null;
    const ok = await vscode.window.showWarningMessage(
      pending ? 'Delete this pending comment?' : 'Delete this comment?',
      {
        modal: true,
        detail: pending ? 'It was not posted; it is dropped from your review.' : 'It is removed for everyone.',
      },
      'Delete',
    );
    if (ok !== 'Delete') return;
    if (comment.view.draftKey) {
      const key = comment.view.draftKey;
      await this.deps.userState.updatePending(comment.changeRequestId, (all) =>
        removeDraft(all, comment.changeRequestId, key),
      );
      return;
    }
    const client = this.deps.connection.client;
    if (!client || comment.view.id === null) throw new ApiError('signedOut', 'Not signed in.');
    await client.deleteComment(comment.view.id);
    await this.reloadComments(comment.changeRequestId);
  }

  /** Resolves or reopens a posted thread (a PATCH of its root's `resolved` only: no one's text is touched). */
  async setResolved(thread: vscode.CommentThread, resolved: boolean): Promise<void> {
    const known = this.ours.get(thread);
    const shown = known ? this.shown.get(`${known.changeRequestId}/${known.key}`) : undefined;
    if (!known || !shown || shown.view.rootId === null)
      throw new ApiError('invalid', 'Only a posted thread can be resolved.');
    const client = this.deps.connection.client;
    if (!client) throw new ApiError('signedOut', 'Not signed in.');
    await client.updateComment(shown.view.rootId, { resolved });
    await this.reloadComments(known.changeRequestId);
  }

  // ------------------------------------------------------------------ suggested changes

  /**
   * Posts a comment with a suggested change for the attribute of the thread (or of its line): the
   * value from a ```` ```suggestion ```` block of the text, else typed in an input box that starts
   * from the attribute's value in the branch (as GitHub starts from the line).
   */
  async suggestChange(reply: vscode.CommentReply): Promise<void> {
    const t = this.target(reply);
    const known = this.ours.get(reply.thread);
    const attribute = known
      ? (this.shown.get(`${known.changeRequestId}/${known.key}`)?.view.attribute ?? null)
      : t.attribute;
    if (t.parentDraft !== null)
      throw new ApiError(
        'invalid',
        'This thread is still pending in your review: submit the review, then suggest a change.',
      );
    if (!attribute)
      throw new ApiError(
        'invalid',
        'A suggestion is for one attribute: start the thread on the line of that attribute.',
      );
    const change = this.deps.cache.get(t.changeRequestId)?.changes.find((c) => c.id === t.changeDiff);
    if (!change?.modified) throw new ApiError('invalid', 'A deleted object cannot take suggestions.');
    const block = suggestionBlock(reply.text);
    let valueText = block?.valueText;
    if (valueText === undefined) {
      valueText = await vscode.window.showInputBox({
        title: `Suggest a change to ${attribute}`,
        prompt: `The value you suggest for ${attribute} (YAML: text, a number, [a, list], {a: map} or null)`,
        value: valueAsInput(valueAt(change.modified, attribute)),
        ignoreFocusOut: true,
        validateInput: (v) => {
          const parsed = parseValue(v);
          return parsed.ok ? undefined : parsed.message;
        },
      });
      if (valueText === undefined) return;
    }
    const parsed = parseValue(valueText);
    if (!parsed.ok) throw new ApiError('invalid', `The suggested value is not valid YAML: ${parsed.message}`);
    const client = this.deps.connection.client;
    if (!client) throw new ApiError('signedOut', 'Not signed in.');
    const words = (block ? block.text : reply.text).trim();
    const created = await client.createComment({
      change_request: t.changeRequestId,
      change_diff: t.changeDiff,
      text: words || `Suggested value for \`${attribute}\`.`,
      parent: t.parent,
      attribute: t.parent === null ? attribute : undefined,
      suggestion: { attribute, value: parsed.value },
    });
    this.deps.log.info(`suggestion ${created.id} posted on change ${t.changeDiff} (${attribute})`);
    if (this.isNew(reply.thread)) reply.thread.dispose();
    await this.reloadComments(t.changeRequestId, created);
  }

  /**
   * Applies suggestions of a request (written into its branch as the user); an outdated one is
   * applied only once the user says so. Returns whether anything was applied.
   */
  async applySuggestions(changeRequestId: number, commentIds: number[]): Promise<boolean> {
    const client = this.deps.connection.client;
    if (!client) throw new ApiError('signedOut', 'Not signed in.');
    try {
      await client.applySuggestions(changeRequestId, commentIds);
    } catch (e) {
      const err = asApiError(e);
      if (err.kind !== 'conflict' || !/outdated/.test(err.message)) throw e;
      const ok = await vscode.window.showWarningMessage(
        'Apply an outdated suggestion?',
        {
          modal: true,
          detail: `${err.message}\n\nApplying it anyway overwrites what changed in the branch since it was suggested.`,
        },
        'Apply Anyway',
      );
      if (ok !== 'Apply Anyway') return false;
      await client.applySuggestions(changeRequestId, commentIds, true);
    }
    this.deps.log.info(
      `applied the suggestions of comments ${commentIds.join(', ')} on change request #${changeRequestId}`,
    );
    await this.deps.cache.reload(changeRequestId, ['comments', 'changes', 'request']);
    return true;
  }

  /** The thread a command got (the thread itself, or a comment of it). */
  threadOf(arg: unknown): vscode.CommentThread | undefined {
    if (arg instanceof ReviewComment) return arg.thread;
    if (arg && typeof arg === 'object' && 'comments' in arg && 'uri' in arg) return arg as vscode.CommentThread;
    return undefined;
  }
}
