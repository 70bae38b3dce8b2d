// The REST client of the Change Control service: token authentication, JSON in and out, every
// answer parsed with the zod schemas of contract/api (the ones the service documents its
// routes with), every failure an ApiError. No VS Code here.
import * as z from 'zod';
import {
  branch,
  changeDiff,
  branchActionResult,
  mergeConflictRefusal,
  type Branch,
  type MergeConflict,
  type ChangeDiff,
  type BranchActionResult,
} from '../../contract/api/branching';
import {
  applySuggestionsResult,
  changeComment,
  changeRequest,
  evaluation,
  mergeCheck,
  pluginSettings,
  preview,
  review,
  type ApplySuggestionsResult,
  type ChangeComment,
  type ChangeRequest,
  type Evaluation,
  type LifecycleAction,
  type MergeCheck,
  type PluginSettings,
  type Preview,
  type Review,
  type ReviewDecision,
} from '../../contract/api/change-control';
import { listOf } from '../../contract/api/common';
import { API_PATHS, CHANGE_CONTROL_API } from '../../contract/api/paths';
import { ApiError, errorFromResponse } from './api-error';
import {
  currentUser,
  notification,
  provisionedToken,
  searchResults,
  serviceStatus,
  type CurrentUser,
  type Notification,
  type SearchHit,
} from '../../contract/api/host';

import { mergeQueueEntry, type MergeQueueEntry } from '../../contract/api/freezes';

export const CC = CHANGE_CONTROL_API;

/** A merge refused because it would overwrite main's changes: what it would overwrite. */
export class MergeConflictError extends ApiError {
  constructor(
    message: string,
    readonly conflicts: MergeConflict[],
  ) {
    super('conflict', message, 409);
    this.name = 'MergeConflictError';
  }
}
export const PATHS = API_PATHS;

export type QueryValue = string | number | boolean | readonly (string | number | boolean)[];
export type Query = Record<string, QueryValue | undefined>;

/**
 * Options of one write: the Idempotency-Key that makes a retry replay the first answer, and the
 * If-Match that makes it write only over that version of its object (else 412, `stale`).
 */
export interface WriteOptions {
  idempotencyKey?: string;
  ifMatch?: string;
}

/** An answer with the version of its object (`ETag`; null when the service sent none). */
export interface Versioned<T> {
  value: T;
  etag: string | null;
}

export interface ApiClientOptions {
  baseUrl: string;
  token: string | null;
  /** Per request (default 20 s). */
  timeoutMs?: number;
  /** One line per request, without the token. */
  log?: (line: string) => void;
  /** Every failed call (the connection watches for a service that went away). */
  onFailure?: (error: ApiError) => void;
  fetch?: typeof fetch;
}

/** Filters of the change request list; `reviewer: 'me'` and `requester: 'me'` as the service offers them. */
export interface ChangeRequestFilters {
  status?: readonly ChangeRequest['status'][];
  reviewer?: 'me';
  /** Requests waiting for the caller's advisory review (only a policy on trial names them). */
  advisory_reviewer?: 'me';
  requester?: 'me';
  ordering?: string;
  limit?: number;
}

const LIST_PAGE = 1000;
const MAX_PAGES = 50;

export function queryString(query: Query = {}): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value]) params.append(key, String(v));
  }
  const s = params.toString();
  return s ? `?${s}` : '';
}

function describeIssues(error: z.ZodError): string {
  return error.issues
    .slice(0, 3)
    .map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`)
    .join('; ');
}

export class ApiClient {
  readonly baseUrl: string;
  private readonly fetchImpl: typeof fetch;

  constructor(private readonly options: ApiClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.fetchImpl = options.fetch ?? fetch;
  }

  get token(): string | null {
    return this.options.token;
  }

  /** The same service with another token. */
  withToken(token: string | null): ApiClient {
    return new ApiClient({ ...this.options, token });
  }

  // ------------------------------------------------------------------ transport

  /** One request; returns the parsed JSON body (undefined for 204), throws ApiError otherwise. */
  async request(
    method: string,
    path: string,
    body?: unknown,
    opts: { auth?: boolean; branch?: string } & WriteOptions = {},
  ): Promise<unknown> {
    return (await this.exchange(method, path, body, opts)).value;
  }

  /** One request; returns the parsed JSON body and the answer's ETag, throws ApiError otherwise. */
  private async exchange(
    method: string,
    path: string,
    body: unknown,
    opts: { auth?: boolean; branch?: string } & WriteOptions,
  ): Promise<Versioned<unknown>> {
    const auth = opts.auth ?? true;
    if (auth && !this.options.token) throw new ApiError('signedOut', 'Not signed in.');
    const headers: Record<string, string> = { Accept: 'application/json' };
    if (auth && this.options.token) headers.Authorization = `Token ${this.options.token}`;
    if (opts.idempotencyKey) headers['Idempotency-Key'] = opts.idempotencyKey;
    if (opts.ifMatch) headers['If-Match'] = opts.ifMatch;
    // Reads and writes in a branch (its schema id), as every NetBox branching client sends it.
    if (opts.branch) headers['X-NetBox-Branch'] = opts.branch;
    let payload: string | undefined;
    if (body !== undefined) {
      headers['Content-Type'] = 'application/json';
      payload = JSON.stringify(body);
    }
    const url = path.startsWith('http') ? path : `${this.baseUrl}${path}`;
    const started = Date.now();
    let res: Response;
    try {
      res = await this.fetchImpl(url, {
        method,
        headers,
        body: payload,
        signal: AbortSignal.timeout(this.options.timeoutMs ?? 20_000),
      });
    } catch (e) {
      const err = e as Error & { cause?: { code?: string; message?: string } };
      const reason =
        err.name === 'TimeoutError' ? 'no answer in time' : (err.cause?.code ?? err.cause?.message ?? err.message);
      this.options.log?.(`${method} ${path} -> unreachable (${reason})`);
      throw this.failed(new ApiError('unreachable', `${this.baseUrl}: ${reason}`));
    }
    const text = await res.text().catch(() => '');
    this.options.log?.(`${method} ${path} -> ${res.status} (${Date.now() - started} ms)`);
    let parsed: unknown = undefined;
    if (text) {
      try {
        parsed = JSON.parse(text);
      } catch {
        if (res.ok) throw new ApiError('badResponse', `${method} ${path}: the answer is not JSON`, res.status);
        parsed = text;
      }
    }
    if (!res.ok) throw this.failed(errorFromResponse(res.status, parsed));
    return { value: parsed, etag: res.headers.get('etag') };
  }

  private failed(error: ApiError): ApiError {
    try {
      this.options.onFailure?.(error);
    } catch {
      // A listener's failure is not the call's.
    }
    return error;
  }

  /** One request whose answer is parsed with `schema` (an ApiError `badResponse` when it does not fit). */
  async call<T extends z.ZodType>(
    schema: T,
    method: string,
    path: string,
    body?: unknown,
    opts?: { auth?: boolean; branch?: string } & WriteOptions,
  ): Promise<z.infer<T>> {
    const raw = await this.request(method, path, body, opts);
    const result = schema.safeParse(raw);
    if (!result.success) throw new ApiError('badResponse', `${method} ${path}: ${describeIssues(result.error)}`);
    return result.data;
  }

  /** As `call`, with the version of the object answered (its ETag). */
  async callVersioned<T extends z.ZodType>(
    schema: T,
    method: string,
    path: string,
    body?: unknown,
    opts: { branch?: string } & WriteOptions = {},
  ): Promise<Versioned<z.infer<T>>> {
    const { value, etag } = await this.exchange(method, path, body, opts);
    const result = schema.safeParse(value);
    if (!result.success) throw new ApiError('badResponse', `${method} ${path}: ${describeIssues(result.error)}`);
    return { value: result.data, etag };
  }

  /** Every item of a list endpoint, following `next` links. */
  async listAll<T extends z.ZodType>(item: T, path: string, query: Query = {}): Promise<z.infer<T>[]> {
    const page = listOf(item);
    const out: z.infer<T>[] = [];
    let next: string | null = `${path}${queryString({ limit: LIST_PAGE, ...query })}`;
    for (let i = 0; next && i < MAX_PAGES; i += 1) {
      const body: z.infer<typeof page> = await this.call(page, 'GET', next);
      out.push(...body.results);
      next = body.next ? this.relative(body.next) : null;
    }
    return out;
  }

  /** One page of a list endpoint (for bounded lists such as "recently closed"). */
  async listPage<T extends z.ZodType>(
    item: T,
    path: string,
    query: Query = {},
  ): Promise<{ count: number; results: z.infer<T>[] }> {
    const body = await this.call(listOf(item), 'GET', `${path}${queryString(query)}`);
    return { count: body.count, results: body.results };
  }

  /** A `next` link or an object's URL as a path on our own base URL (the service may name itself differently). */
  relative(link: string): string {
    try {
      const u = new URL(link);
      const base = new URL(this.baseUrl);
      const prefix = base.pathname.replace(/\/+$/, '');
      const path = u.pathname.startsWith(prefix) ? u.pathname.slice(prefix.length) : u.pathname;
      return `${path}${u.search}`;
    } catch {
      return link;
    }
  }

  // ------------------------------------------------------------------ host

  status() {
    return this.call(serviceStatus, 'GET', PATHS.status, undefined, { auth: false });
  }

  me(): Promise<CurrentUser> {
    return this.call(currentUser, 'GET', PATHS.me);
  }

  /** A new token for a username and password (no token needed); returns its key. */
  async provisionToken(username: string, password: string, description: string): Promise<string> {
    const token = await this.call(
      provisionedToken,
      'POST',
      PATHS.provision,
      { username, password, description },
      { auth: false },
    );
    return token.key;
  }

  listBranches(query: Query = {}): Promise<Branch[]> {
    return this.listAll(branch, PATHS.branches, query);
  }

  getBranch(id: number): Promise<Branch> {
    return this.call(branch, 'GET', `${PATHS.branches}${id}/`);
  }

  /** The net-effect changes of a branch. */
  listChanges(branchId: number): Promise<ChangeDiff[]> {
    return this.listAll(changeDiff, PATHS.changes, { branch_id: branchId });
  }

  /** Merges a branch (the merge gate is consulted; a refusal is a 409 with the reason). */
  /**
   * Merges a branch into main. `acknowledgeConflicts`: the caller saw what the merge overwrites
   * on main and agreed. A refusal that names the conflicts (409) is a MergeConflictError; a
   * service that does not know acknowledgements (400 naming the field) is asked again without,
   * as it merges without asking.
   */
  async mergeBranch(branchId: number, opts: { acknowledgeConflicts?: boolean } = {}): Promise<BranchActionResult> {
    const path = `${PATHS.branches}${branchId}/merge/`;
    try {
      return await this.call(
        branchActionResult,
        'POST',
        path,
        opts.acknowledgeConflicts ? { commit: true, acknowledge_conflicts: true } : { commit: true },
      );
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
      if (opts.acknowledgeConflicts && e.kind === 'invalid' && 'acknowledge_conflicts' in e.fields)
        return this.call(branchActionResult, 'POST', path, { commit: true });
      if (e.kind === 'conflict') {
        const refusal = mergeConflictRefusal.safeParse(e.body);
        if (refusal.success) throw new MergeConflictError(refusal.data.detail, refusal.data.conflicts);
      }
      throw e;
    }
  }

  listNotifications(
    query: { unreadOnly?: boolean; limit?: number } = {},
  ): Promise<{ count: number; results: Notification[] }> {
    return this.listPage(notification, PATHS.notifications, {
      read: query.unreadOnly ? false : undefined,
      limit: query.limit ?? 50,
    });
  }

  markNotificationRead(id: number) {
    return this.call(notification, 'PATCH', `${PATHS.notifications}${id}/`, { read: true });
  }

  /** The change request an API object belongs to (a review, comment or check), read from its `change_request` field. */
  async changeRequestOf(objectUrl: string): Promise<number | null> {
    const body = await this.call(
      z.looseObject({ change_request: z.number().int().nullable().optional() }),
      'GET',
      this.relative(objectUrl),
    );
    return body.change_request ?? null;
  }

  /** Search hits, and whether more matched than the answer holds. */
  search(q: string): Promise<{ results: SearchHit[]; truncated: boolean }> {
    return this.call(searchResults, 'GET', `${PATHS.search}${queryString({ q })}`);
  }

  /** A new branch (empty; writes go to it with the branch's schema id). */
  createBranch(body: { name: string; description?: string }): Promise<Branch> {
    return this.call(branch, 'POST', PATHS.branches, body);
  }

  /**
   * Opens the event stream (Server-Sent Events): the raw response, for the stream reader
   * (core/live-stream.ts). `lastEventId` resumes after that event. Throws ApiError when the
   * service answers with anything but a stream.
   */
  async openStream(opts: { lastEventId?: string | null; signal?: AbortSignal; query?: Query } = {}): Promise<Response> {
    if (!this.options.token) throw new ApiError('signedOut', 'Not signed in.');
    const headers: Record<string, string> = {
      Accept: 'text/event-stream',
      Authorization: `Token ${this.options.token}`,
      'Cache-Control': 'no-cache',
    };
    if (opts.lastEventId) headers['Last-Event-ID'] = opts.lastEventId;
    const path = `${PATHS.stream}${queryString(opts.query)}`;
    let res: Response;
    try {
      res = await this.fetchImpl(`${this.baseUrl}${path}`, { method: 'GET', headers, signal: opts.signal });
    } catch (e) {
      const err = e as Error & { cause?: { code?: string; message?: string } };
      if (err.name === 'AbortError') throw e;
      throw new ApiError('unreachable', `${this.baseUrl}: ${err.cause?.code ?? err.cause?.message ?? err.message}`);
    }
    this.options.log?.(`GET ${path} -> ${res.status} (stream)`);
    if (!res.ok) {
      const text = await res.text().catch(() => '');
      let parsed: unknown = text;
      try {
        parsed = text ? JSON.parse(text) : undefined;
      } catch {
        /* not JSON */
      }
      throw errorFromResponse(res.status, parsed);
    }
    if (!(res.headers.get('content-type') ?? '').startsWith('text/event-stream') || !res.body) {
      void res.body?.cancel().catch(() => undefined);
      throw new ApiError('badResponse', `GET ${path}: the answer is not an event stream`, res.status);
    }
    return res;
  }

  // ------------------------------------------------------------------ change control

  /** The plugin settings the service applies (e.g. where the change request panel goes). */
  getSettings(): Promise<PluginSettings> {
    return this.call(pluginSettings, 'GET', PATHS.settings);
  }

  listChangeRequests(filters: ChangeRequestFilters = {}): Promise<ChangeRequest[]> {
    const query: Query = {
      status: filters.status,
      reviewer: filters.reviewer,
      advisory_reviewer: filters.advisory_reviewer,
      requester: filters.requester,
      ordering: filters.ordering,
    };
    return this.listAll(changeRequest, PATHS.changeRequests, query);
  }

  /** The merge queue, head first (the requests the caller may view; positions count the whole queue). */
  listMergeQueue(): Promise<MergeQueueEntry[]> {
    return this.listAll(mergeQueueEntry, PATHS.mergeQueue, {});
  }

  /** Syncs a branch with main; `commit: false` is the dry run (what it would do, nothing written). */
  syncBranch(branchId: number, commit: boolean): Promise<BranchActionResult> {
    return this.call(branchActionResult, 'POST', `${PATHS.branches}${branchId}/sync/`, { commit });
  }

  /** At most `limit` change requests (one page). */
  async listSomeChangeRequests(filters: ChangeRequestFilters & { limit: number }): Promise<ChangeRequest[]> {
    const query: Query = {
      status: filters.status,
      reviewer: filters.reviewer,
      requester: filters.requester,
      ordering: filters.ordering,
      limit: filters.limit,
    };
    return (await this.listPage(changeRequest, PATHS.changeRequests, query)).results;
  }

  getChangeRequest(id: number): Promise<ChangeRequest> {
    return this.call(changeRequest, 'GET', `${PATHS.changeRequests}${id}/`);
  }

  createChangeRequest(body: {
    branch: number;
    title?: string;
    ref?: string;
    description?: string;
  }): Promise<ChangeRequest> {
    return this.call(changeRequest, 'POST', PATHS.changeRequests, body);
  }

  /** Edits a request's title, description or reference (PATCH). */
  updateChangeRequest(
    id: number,
    body: { title?: string; description?: string; ref?: string },
  ): Promise<ChangeRequest> {
    return this.call(changeRequest, 'PATCH', `${PATHS.changeRequests}${id}/`, body);
  }

  getEvaluation(id: number): Promise<Evaluation> {
    return this.call(evaluation, 'GET', `${PATHS.changeRequests}${id}/evaluation/`);
  }

  /** submit, return-to-draft, abandon or reopen; a move that does not apply is a 409. */
  lifecycle(id: number, action: LifecycleAction): Promise<ChangeRequest> {
    return this.call(changeRequest, 'POST', `${PATHS.changeRequests}${id}/${action}/`);
  }

  /** Merges a request the gate refuses, giving a reason (needs change_control.override_gate). */
  overrideChangeRequest(id: number, reason: string): Promise<ChangeRequest> {
    return this.call(changeRequest, 'POST', `${PATHS.changeRequests}${id}/override/`, { reason });
  }

  /** What would govern a branch before a change request exists. */
  previewBranch(branchId: number): Promise<Preview> {
    return this.call(preview, 'GET', `/api/plugins/change-control/preview/?branch_id=${branchId}`);
  }

  runChecks(id: number): Promise<ChangeRequest> {
    return this.call(changeRequest, 'POST', `${PATHS.changeRequests}${id}/run-checks/`);
  }

  async listChecks(changeRequestId: number): Promise<MergeCheck[]> {
    const all = await this.listAll(mergeCheck, PATHS.checks, { change_request_id: changeRequestId });
    return all.filter((c) => c.change_request === changeRequestId);
  }

  async listReviews(changeRequestId: number): Promise<Review[]> {
    const all = await this.listAll(review, PATHS.reviews, { change_request_id: changeRequestId });
    return all.filter((r) => r.change_request === changeRequestId);
  }

  /** The caller's own reviews. */
  async listMyReviews(meId: number): Promise<Review[]> {
    const all = await this.listAll(review, PATHS.reviews, { reviewer_id: meId });
    return all.filter((r) => r.reviewer.id === meId);
  }

  createReview(
    body: { change_request: number; decision: ReviewDecision; comment: string },
    opts: WriteOptions = {},
  ): Promise<Review> {
    return this.call(review, 'POST', PATHS.reviews, body, opts);
  }

  updateReview(
    id: number,
    body: { decision: ReviewDecision; comment: string },
    opts: WriteOptions = {},
  ): Promise<Review> {
    return this.call(review, 'PATCH', `${PATHS.reviews}${id}/`, body, opts);
  }

  async listComments(changeRequestId: number): Promise<ChangeComment[]> {
    const all = await this.listAll(changeComment, PATHS.comments, { change_request_id: changeRequestId });
    return all.filter((c) => c.change_request === changeRequestId);
  }

  /** A comment; a thread's first one may name an `attribute` of its change (replies take their root's). */
  createComment(
    body: {
      change_request: number;
      change_diff: number;
      text: string;
      parent?: number | null;
      attribute?: string | null;
      /** A suggested change: a value for an attribute of the branch's state of the object. */
      suggestion?: { attribute: string; value: unknown };
    },
    opts: WriteOptions = {},
  ): Promise<ChangeComment> {
    const payload = { ...body };
    if (payload.attribute === undefined) delete payload.attribute;
    if (payload.suggestion === undefined) delete payload.suggestion;
    return this.call(changeComment, 'POST', PATHS.comments, payload, opts);
  }

  updateComment(
    id: number,
    body: { text?: string; resolved?: boolean },
    opts: WriteOptions = {},
  ): Promise<ChangeComment> {
    return this.call(changeComment, 'PATCH', `${PATHS.comments}${id}/`, body, opts);
  }

  async deleteComment(id: number, opts: WriteOptions = {}): Promise<void> {
    await this.request('DELETE', `${PATHS.comments}${id}/`, undefined, opts);
  }

  /** Writes these comments' suggestions into the request's branch, as the caller, all or none (an outdated one is a 409 unless forced). */
  applySuggestions(
    changeRequestId: number,
    comments: readonly number[],
    force = false,
  ): Promise<ApplySuggestionsResult> {
    return this.call(applySuggestionsResult, 'POST', `${PATHS.changeRequests}${changeRequestId}/apply-suggestions/`, {
      comments,
      ...(force ? { force } : {}),
    });
  }
}
