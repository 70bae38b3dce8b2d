// The lists behind the views: open requests, those waiting for my review (binding, and advisory),
// mine, recently closed, my own reviews, and the merge queue. One refresh at a time; a refresh asked for meanwhile runs once afterwards.
import type { ChangeRequest, Review } from '../../contract/api/change-control';
import type { MergeQueueEntry } from '../../contract/api/freezes';
import { OPEN_STATUSES, type ChangeRequestStatus } from '../../contract/api/vocabulary';
import type { ApiClient } from './api-client';
import { asApiError, type ApiError } from './api-error';
import { EMPTY_LISTS, RECENTLY_CLOSED_LIMIT, indexById, type ChangeRequestLists } from './grouping';

export type ListsClient = Pick<
  ApiClient,
  'listChangeRequests' | 'listSomeChangeRequests' | 'listMyReviews' | 'listMergeQueue'
>;

/** Statuses in which a request can wait for a review. */
export const REVIEWABLE_STATUSES = [
  'needs-review',
  'approved',
  'rejected',
] as const satisfies readonly ChangeRequestStatus[];
export const CLOSED_STATUSES = ['completed', 'abandoned'] as const satisfies readonly ChangeRequestStatus[];
/** Recently closed: the requests closed (or otherwise touched) last come first. */
export const RECENTLY_CLOSED_ORDERING = '-last_updated';

export async function loadLists(client: ListsClient): Promise<ChangeRequestLists> {
  const [open, needsMyReview, advisory, mine, closed] = await Promise.all([
    client.listChangeRequests({ status: OPEN_STATUSES }),
    client.listChangeRequests({ reviewer: 'me', status: REVIEWABLE_STATUSES }),
    client.listChangeRequests({ advisory_reviewer: 'me', status: REVIEWABLE_STATUSES }),
    client.listChangeRequests({ requester: 'me', status: OPEN_STATUSES }),
    client.listSomeChangeRequests({
      status: CLOSED_STATUSES,
      ordering: RECENTLY_CLOSED_ORDERING,
      limit: RECENTLY_CLOSED_LIMIT,
    }),
  ]);
  return { open, needsMyReview, advisory, mine, closed };
}

export interface StoreState {
  lists: ChangeRequestLists;
  myReviews: Review[];
  /** The merge queue, head first. */
  queue: MergeQueueEntry[];
  /** The merge queue failed on its own. */
  queueError: ApiError | null;
  /** The last refresh's failure (lists keep their previous content). */
  error: ApiError | null;
  /** My Reviews failed on its own. */
  reviewsError: ApiError | null;
  loading: boolean;
  loaded: boolean;
}

/** What the store holds before the first load and after signing out. */
const NOTHING_LOADED: StoreState = {
  lists: EMPTY_LISTS,
  myReviews: [],
  queue: [],
  queueError: null,
  error: null,
  reviewsError: null,
  loading: false,
  loaded: false,
};

export class ChangeRequestStore {
  private current: StoreState = NOTHING_LOADED;
  private readonly listeners = new Set<(state: StoreState) => void>();
  private running: Promise<void> | undefined;
  private again = false;

  get state(): StoreState {
    return this.current;
  }

  onDidChange(listener: (state: StoreState) => void): { dispose(): void } {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  }

  byId(id: number): ChangeRequest | undefined {
    return indexById(this.current.lists).get(id);
  }

  /** Forgets everything (signed out). */
  clear(): void {
    this.set(NOTHING_LOADED);
  }

  /** Loads the lists with `client` for the user `meId`. */
  refresh(client: ListsClient, meId: number): Promise<void> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = (async () => {
      try {
        do {
          this.again = false;
          await this.load(client, meId);
        } while (this.again);
      } finally {
        this.running = undefined;
      }
    })();
    return this.running;
  }

  private async load(client: ListsClient, meId: number): Promise<void> {
    this.set({ ...this.current, loading: true });
    const [lists, reviews, queue] = await Promise.allSettled([
      loadLists(client),
      client.listMyReviews(meId),
      client.listMergeQueue(),
    ]);
    this.set({
      lists: lists.status === 'fulfilled' ? lists.value : this.current.lists,
      error: lists.status === 'rejected' ? asApiError(lists.reason) : null,
      myReviews: reviews.status === 'fulfilled' ? reviews.value : this.current.myReviews,
      reviewsError: reviews.status === 'rejected' ? asApiError(reviews.reason) : null,
      queue: queue.status === 'fulfilled' ? queue.value : this.current.queue,
      queueError: queue.status === 'rejected' ? asApiError(queue.reason) : null,
      loading: false,
      loaded: this.current.loaded || lists.status === 'fulfilled',
    });
  }

  private set(state: StoreState): void {
    this.current = state;
    for (const l of this.listeners) l(state);
  }
}
