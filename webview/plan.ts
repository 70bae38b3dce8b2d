// What an update must touch on the page: the regions whose inputs changed, and for the keyed
// list of changes which items to remove, insert or move, and which to render again. Pure, so the
// rules are tested without a DOM; the view applies the plan.
import { sameInputs } from '../contract/webview/share';

/** Ids of the regions whose inputs differ from the ones they were last rendered with. */
export function planRegions(
  previous: ReadonlyMap<string, readonly unknown[]>,
  next: ReadonlyMap<string, readonly unknown[]>,
): string[] {
  const out: string[] = [];
  for (const [id, inputs] of next) if (!sameInputs(previous.get(id), inputs)) out.push(id);
  return out;
}

export interface ListPlan {
  /** Items no longer rendered. */
  remove: string[];
  /** Items to put in place, in this order: each goes right before `before` (null: at the end). New items are rendered first; kept ones are moved. */
  place: { key: string; before: string | null }[];
  /** Kept items whose inputs changed: rendered again in place. */
  update: string[];
}

/**
 * The keyed update from the rendered items `previous` to `next`: kept items stay (and are
 * rendered again only when `dirty`), the others are removed or inserted, and a kept item that
 * is out of order is moved. Placements are listed from the last item to the first, so that each
 * one's `before` is already where it belongs.
 */
export function planList(
  previous: readonly string[],
  next: readonly string[],
  dirty: (key: string) => boolean,
): ListPlan {
  const nextSet = new Set(next);
  const prevSet = new Set(previous);
  const remove = previous.filter((k) => !nextSet.has(k));
  const kept = previous.filter((k) => nextSet.has(k));
  // Kept items that come in the same order as before stay (a greedy match); the rest are moved.
  const stays = new Set<string>();
  let p = 0;
  for (const k of next) {
    if (!prevSet.has(k)) continue;
    if (kept[p] === k) {
      stays.add(k);
      p += 1;
    }
  }
  const place: ListPlan['place'] = [];
  for (let i = next.length - 1; i >= 0; i--) {
    const k = next[i]!;
    if (!stays.has(k)) place.push({ key: k, before: next[i + 1] ?? null });
  }
  const update = next.filter((k) => prevSet.has(k) && dirty(k));
  return { remove, place, update };
}
