// A refresh sent as what changed: the host remembers what it last sent a panel and sends only the
// parts that differ (and, of the changes and comments, only the items that differ, with the full
// order of ids). A review of 2,000 changes is several megabytes; a refresh after one comment is a
// few hundred bytes, and the panel keeps every unchanged object as it was.
import {
  WHOLE_PARTS,
  type ChangeRequestSnapshot,
  type ListDelta,
  type SnapshotDelta,
  type SnapshotMessage,
  type WholePart,
} from './protocol';
import { shareEqual } from './share';

interface Sent {
  seq: number;
  changeRequestId: number;
  parts: Map<WholePart, string>;
  changes: { order: string; items: Map<number, string> };
  comments: { order: string; items: Map<number, string> };
}

function listState<T extends { id: number }>(list: readonly T[]): Sent['changes'] {
  return { order: list.map((i) => i.id).join(','), items: new Map(list.map((i) => [i.id, JSON.stringify(i)])) };
}

function listDelta<T extends { id: number }>(
  before: Sent['changes'],
  after: Sent['changes'],
  list: readonly T[],
): ListDelta<T> | undefined {
  const items = list.filter((i) => before.items.get(i.id) !== after.items.get(i.id));
  if (!items.length && before.order === after.order) return undefined;
  return { ids: list.map((i) => i.id), items };
}

/** The host's side: turns each snapshot into the message to send, a delta when it can. */
export class SnapshotEncoder {
  private sent: Sent | null = null;
  private seq = 0;

  /** Forget what was sent (a new webview, or one that lost track): the next message is whole. */
  reset(): void {
    this.sent = null;
  }

  encode(snapshot: ChangeRequestSnapshot): SnapshotMessage {
    this.seq += 1;
    const now: Sent = {
      seq: this.seq,
      changeRequestId: snapshot.changeRequest.id,
      parts: new Map(WHOLE_PARTS.map((p) => [p, JSON.stringify(snapshot[p])])),
      changes: listState(snapshot.changes),
      comments: listState(snapshot.comments),
    };
    const before = this.sent;
    this.sent = now;
    if (!before || before.changeRequestId !== now.changeRequestId) return { type: 'snapshot', snapshot, seq: now.seq };
    const parts: SnapshotDelta['parts'] = {};
    for (const p of WHOLE_PARTS)
      if (before.parts.get(p) !== now.parts.get(p)) (parts as Record<string, unknown>)[p] = snapshot[p];
    const delta: SnapshotDelta = { changeRequestId: now.changeRequestId, baseSeq: before.seq, seq: now.seq, parts };
    const changes = listDelta(before.changes, now.changes, snapshot.changes);
    const comments = listDelta(before.comments, now.comments, snapshot.comments);
    if (changes) delta.changes = changes;
    if (comments) delta.comments = comments;
    return { type: 'snapshotDelta', delta };
  }
}

function applyList<T extends { id: number }>(prev: readonly T[], delta: ListDelta<T> | undefined): T[] | null {
  if (!delta) return prev as T[];
  const byId = new Map(prev.map((i) => [i.id, i]));
  const fresh = new Map(delta.items.map((i) => [i.id, i]));
  const out: T[] = [];
  for (const id of delta.ids) {
    const item = fresh.has(id) ? shareEqual(byId.get(id), fresh.get(id)!) : byId.get(id);
    if (item === undefined) return null;
    out.push(item);
  }
  return out;
}

/** The snapshot after a delta; null when the delta does not fit it (the panel then asks for a whole one). */
export function applyDelta(prev: ChangeRequestSnapshot, delta: SnapshotDelta): ChangeRequestSnapshot | null {
  if (prev.changeRequest.id !== delta.changeRequestId) return null;
  const changes = applyList(prev.changes, delta.changes);
  const comments = applyList(prev.comments, delta.comments);
  if (!changes || !comments) return null;
  const next: ChangeRequestSnapshot = { ...prev, changes, comments };
  for (const p of WHOLE_PARTS) {
    if (p in delta.parts) (next as unknown as Record<string, unknown>)[p] = shareEqual(prev[p], delta.parts[p]);
  }
  return next;
}
