// The request's timeline: its creation and status moves (from the changelog, when the caller may
// read it), reviews, comments, check results and the override (from the request), oldest first.
import type { ChangeComment, ChangeRequest, MergeCheck, Review } from '../contract/api/change-control';
import type { ChangeRequestSnapshot, LifecycleMove } from '../contract/webview/protocol';

export type TimelineEntry =
  | { kind: 'created'; key: string; time: string; who: string | null }
  | { kind: 'status'; key: string; time: string; move: LifecycleMove }
  | { kind: 'review'; key: string; time: string; review: Review; updated: boolean }
  | { kind: 'comment'; key: string; time: string; comment: ChangeComment }
  | { kind: 'check'; key: string; time: string; check: MergeCheck }
  | { kind: 'override'; key: string; time: string; override: NonNullable<ChangeRequest['override']> };

/** At one instant, the override comes before the move to Completed it caused. */
const KIND_ORDER: Record<TimelineEntry['kind'], number> = {
  created: 0,
  override: 1,
  status: 2,
  review: 3,
  comment: 4,
  check: 5,
};

function byTime(a: TimelineEntry, b: TimelineEntry): number {
  const ta = Date.parse(a.time);
  const tb = Date.parse(b.time);
  if (ta !== tb && !Number.isNaN(ta) && !Number.isNaN(tb)) return ta - tb;
  return KIND_ORDER[a.kind] - KIND_ORDER[b.kind] || a.key.localeCompare(b.key);
}

export function buildTimeline(
  snap: Pick<ChangeRequestSnapshot, 'changeRequest' | 'history' | 'reviews' | 'comments' | 'checks'>,
): TimelineEntry[] {
  const cr = snap.changeRequest;
  const out: TimelineEntry[] = [];
  const moves = snap.history ?? [];
  const creation = moves.find((m) => m.from === null);
  out.push({
    kind: 'created',
    key: 'created',
    time: creation?.time ?? cr.created,
    who: creation?.user ?? cr.requester?.display ?? null,
  });
  for (const m of moves)
    if (m.from !== null) out.push({ kind: 'status', key: `status:${m.id}`, time: m.time, move: m });
  for (const r of snap.reviews) {
    const updated = r.last_updated !== r.created;
    out.push({ kind: 'review', key: `review:${r.id}`, time: updated ? r.last_updated : r.created, review: r, updated });
  }
  for (const c of snap.comments) out.push({ kind: 'comment', key: `comment:${c.id}`, time: c.created, comment: c });
  for (const c of snap.checks)
    if (c.completed) out.push({ kind: 'check', key: `check:${c.id}`, time: c.completed, check: c });
  // The override is the request's own field: everyone who may view the request sees it, changelog or not.
  if (cr.override)
    out.push({ kind: 'override', key: 'override', time: cr.override.time || cr.last_updated, override: cr.override });
  return out.sort(byTime);
}

/** The latest `limit` entries, and how many earlier ones are left out. */
export function latest(
  entries: readonly TimelineEntry[],
  limit: number,
): { shown: readonly TimelineEntry[]; hidden: number } {
  const hidden = Math.max(0, entries.length - limit);
  return { shown: entries.slice(hidden), hidden };
}
