// What the editor shows of the change requests being reviewed in it: each request with its
// changes and its comments, loaded once and reloaded part by part when something changed (an
// event of the stream, a write of our own). The documents, the gutter threads and the Changed
// Objects tree read from here. One load per request at a time; a reload asked for meanwhile runs
// once afterwards. No VS Code here.
import type { ChangeDiff } from '../../contract/api/branching';
import type { ChangeComment, ChangeRequest } from '../../contract/api/change-control';
import type { ApiClient } from './api-client';
import { asApiError, type ApiError } from './api-error';
import { objectKey } from './change-documents';

export const DATA_PARTS = ['request', 'changes', 'comments'] as const;
export type DataPart = (typeof DATA_PARTS)[number];

export interface RequestData {
  changeRequest: ChangeRequest;
  changes: ChangeDiff[];
  /** Changes by `object_type:object_id`. */
  byObject: Map<string, ChangeDiff>;
  comments: ChangeComment[];
  /** Bumped whenever the changes were reloaded (documents use it as their modification time). */
  changesVersion: number;
  /** Parts whose last reload failed, with why (the rest is as last loaded). */
  errors: Partial<Record<DataPart, ApiError>>;
}

export type DataClient = Pick<ApiClient, 'getChangeRequest' | 'listChanges' | 'listComments'>;

export type DataListener = (changeRequestId: number, parts: ReadonlySet<DataPart>) => void;

interface Entry {
  data: RequestData | undefined;
  running: Promise<RequestData> | undefined;
  wanted: Set<DataPart>;
}

export class RequestDataCache {
  private readonly entries = new Map<number, Entry>();
  private readonly listeners = new Set<DataListener>();
  private version = 0;
  private epoch = 0;

  constructor(private readonly clientOf: () => DataClient | null) {}

  onDidChange(listener: DataListener): { dispose(): void } {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  }

  get(changeRequestId: number): RequestData | undefined {
    return this.entries.get(changeRequestId)?.data;
  }

  /** The requests loaded (or loading). */
  tracked(): number[] {
    return [...this.entries.keys()];
  }

  isTracked(changeRequestId: number): boolean {
    return this.entries.has(changeRequestId);
  }

  /** The request's data, loading it the first time. */
  ensure(changeRequestId: number): Promise<RequestData> {
    const entry = this.entries.get(changeRequestId);
    if (entry?.data && !entry.running) return Promise.resolve(entry.data);
    if (entry?.running) return entry.running;
    return this.reload(changeRequestId, DATA_PARTS, { track: true }) as Promise<RequestData>;
  }

  /** Reloads parts of a tracked request (or of any request with `track`); undefined when not tracked. */
  reload(
    changeRequestId: number,
    parts: Iterable<DataPart>,
    opts: { track?: boolean } = {},
  ): Promise<RequestData | undefined> {
    let entry = this.entries.get(changeRequestId);
    if (!entry) {
      if (!opts.track) return Promise.resolve(undefined);
      entry = { data: undefined, running: undefined, wanted: new Set(DATA_PARTS) };
      this.entries.set(changeRequestId, entry);
    }
    for (const p of parts) entry.wanted.add(p);
    if (entry.running) return entry.running;
    const e = entry;
    const epoch = this.epoch;
    e.running = (async () => {
      try {
        let data: RequestData | undefined;
        while (e.wanted.size > 0) {
          const wanted = new Set(e.wanted);
          e.wanted.clear();
          data = await this.load(changeRequestId, e.data, wanted);
          if (epoch !== this.epoch || this.entries.get(changeRequestId) !== e) return data;
          e.data = data;
          this.fire(changeRequestId, wanted);
        }
        return data ?? e.data!;
      } finally {
        e.running = undefined;
      }
    })();
    return e.running;
  }

  /** Puts a request as an answer of the service returned it (after a write). */
  putRequest(cr: ChangeRequest): void {
    const entry = this.entries.get(cr.id);
    if (!entry?.data) return;
    entry.data = { ...entry.data, changeRequest: cr };
    this.fire(cr.id, new Set(['request']));
  }

  /** Stops following a request (listeners hear that its data is gone). */
  forget(changeRequestId: number): void {
    if (this.entries.delete(changeRequestId)) this.fire(changeRequestId, new Set(DATA_PARTS));
  }

  /** Forgets everything (signed out, another service). */
  clear(): void {
    this.epoch += 1;
    const ids = [...this.entries.keys()];
    this.entries.clear();
    for (const id of ids) this.fire(id, new Set(DATA_PARTS));
  }

  private fire(id: number, parts: ReadonlySet<DataPart>): void {
    for (const l of this.listeners) l(id, parts);
  }

  private async load(id: number, previous: RequestData | undefined, wanted: Set<DataPart>): Promise<RequestData> {
    const client = this.clientOf();
    if (!client) throw asApiError(new Error('Not connected to the Change Control service.'));
    // Without data yet, everything loads and the request must: the rest needs its branch.
    const all = previous === undefined;
    const errors: RequestData['errors'] = { ...(previous?.errors ?? {}) };
    let cr = previous?.changeRequest;
    if (all || wanted.has('request') || wanted.has('changes')) {
      try {
        cr = await client.getChangeRequest(id);
        delete errors.request;
      } catch (e) {
        if (all) throw asApiError(e);
        errors.request = asApiError(e);
      }
    }
    const request = cr!;
    const branchId = request.branch_deleted ? null : request.branch;
    const part = async <T>(name: DataPart, load: () => Promise<T>, keep: T): Promise<T> => {
      if (!all && !wanted.has(name)) return keep;
      try {
        const value = await load();
        delete errors[name];
        return value;
      } catch (e) {
        errors[name] = asApiError(e);
        return keep;
      }
    };
    const [changes, comments] = await Promise.all([
      part('changes', async () => (branchId === null ? [] : client.listChanges(branchId)), previous?.changes ?? []),
      part('comments', () => client.listComments(id), previous?.comments ?? []),
    ]);
    const changesReloaded = all || (wanted.has('changes') && !errors.changes);
    return {
      changeRequest: request,
      changes,
      byObject: changesReloaded ? new Map(changes.map((c) => [objectKey(c), c])) : previous!.byObject,
      comments,
      changesVersion: changesReloaded ? ++this.version : previous!.changesVersion,
      errors,
    };
  }
}
