import type { VisibleIds } from '../db/visible-ids';

/**
 * What the host's own lists of other objects' records (the changelog, notifications) show of a
 * plugin's object types: a plugin declares its types, and the object they belong to when they
 * belong to one (a review, a check, a comment or a journal entry belongs to its change request).
 *
 * - A row of one of `objectTypes` shows only to a caller holding that type's view permission
 *   (its constraints judged on the recorded state).
 * - With an `owner`: a row of the owner's type shows only when the caller may view that object,
 *   and a row of one of `objectTypes` only when the caller may view the object it belongs to (the
 *   entry's `related_object`), decided in SQL by the owner's `visibleIds`.
 * - `admit`: what else is judged in code on the recorded state (a comment shows a changed object).
 */
export interface RelatedTypes<C> {
  objectTypes: readonly string[];
  owner?: {
    objectType: string;
    /** The owner's objects the caller may view (null: every one). */
    visibleIds(ctx: C): Promise<VisibleIds | null>;
    /** The owner's id in a recorded state of one of `objectTypes` (what the changelog keeps as its related object). */
    idOf(state: Record<string, unknown>): number | null;
  };
  /** Judges recorded states (`prechange`/`postchange` of rows of `objectTypes`) in code; null: nothing to judge. */
  admit?(ctx: C): Promise<((states: ReadonlyArray<Record<string, unknown>>) => Promise<boolean[]>) | null>;
}

export class RelatedVisibility<C> {
  private readonly registered: RelatedTypes<C>[] = [];

  register(types: RelatedTypes<C>): void {
    this.registered.push(types);
  }

  all(): readonly RelatedTypes<C>[] {
    return this.registered;
  }

  /** The object a recorded state of `objectType` belongs to, if its type belongs to one. */
  relatedOf(
    objectType: string,
    state: Record<string, unknown> | null,
  ): { objectType: string; objectId: number } | null {
    if (state === null) return null;
    for (const r of this.registered) {
      if (!r.owner || !r.objectTypes.includes(objectType)) continue;
      const id = r.owner.idOf(state);
      return id === null ? null : { objectType: r.owner.objectType, objectId: id };
    }
    return null;
  }
}
