// The virtual window of the list of changes: which items to render for the part of the list on
// screen, from each item's height (measured once rendered, estimated before). Pure: the view
// feeds it the numbers it reads from the layout.

/** Offsets of each item's top in the list, plus the list's total height at the end (length n + 1). */
export function prefixSums(heights: readonly number[]): Float64Array {
  const out = new Float64Array(heights.length + 1);
  for (let i = 0; i < heights.length; i++) out[i + 1] = out[i]! + heights[i]!;
  return out;
}

/** The index of the item covering list position `y` (clamped to the list). */
export function indexAt(offsets: ArrayLike<number>, y: number): number {
  const n = offsets.length - 1;
  if (n <= 0) return 0;
  let lo = 0;
  let hi = n - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (offsets[mid]! <= y) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

export interface WindowInput {
  offsets: ArrayLike<number>;
  /** The top of the screen in list coordinates (negative while the list starts below it). */
  top: number;
  /** The height of the screen. */
  height: number;
  /** Extra height rendered above and below the screen, so that scrolling and Tab find items ready. */
  overscan: number;
}

export interface VirtualWindow {
  /** First rendered item. */
  start: number;
  /** One past the last rendered item. */
  end: number;
  /** Height standing in for the items before `start`, and after `end - 1`. */
  padTop: number;
  padBottom: number;
}

/** The items to render: those that meet the screen grown by the overscan (none when the list is off screen). */
export function computeWindow({ offsets, top, height, overscan }: WindowInput): VirtualWindow {
  const n = offsets.length - 1;
  const total = n >= 0 ? offsets[n]! : 0;
  const from = Math.max(0, top - overscan);
  const to = Math.min(total, top + height + overscan);
  if (n <= 0 || to <= 0 || from >= total || to <= from) {
    // Off screen: render the first items anyway when the list starts just below (it will show on the first scroll).
    const start = 0;
    const end = 0;
    return { start, end, padTop: 0, padBottom: total };
  }
  const start = indexAt(offsets, from);
  let end = indexAt(offsets, to) + 1;
  if (offsets[end - 1]! >= to && end - 1 > start) end -= 1;
  return { start, end, padTop: offsets[start]!, padBottom: total - offsets[end]! };
}

export function sameWindow(a: VirtualWindow | null, b: VirtualWindow): boolean {
  return !!a && a.start === b.start && a.end === b.end;
}

/**
 * Item heights by key: measured when rendered, estimated otherwise. A measurement is dropped
 * when the item's content changes (the view calls `forget`) or the width changes (`forgetAll`).
 */
export class HeightCache {
  private readonly measured = new Map<string, number>();

  get(key: string, estimate: () => number): number {
    return this.measured.get(key) ?? estimate();
  }

  /** Records a measured height; false when it is the one already known (0: not laid out, ignored). */
  set(key: string, height: number): boolean {
    if (!(height > 0)) return false;
    const before = this.measured.get(key);
    if (before !== undefined && Math.abs(before - height) < 0.5) return false;
    this.measured.set(key, height);
    return true;
  }

  has(key: string): boolean {
    return this.measured.has(key);
  }

  forget(key: string): void {
    this.measured.delete(key);
  }

  forgetAll(): void {
    this.measured.clear();
  }
}
