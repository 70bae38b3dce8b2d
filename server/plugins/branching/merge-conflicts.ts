import type { MergeConflict } from '../../../contract/api/branching';
import { ChangeVisibility, conflictingChanges, getMainObjects, type AcknowledgedConflicts, type Ctx } from '../../host';
import { changeRepr } from './changes';

export type { AcknowledgedConflicts, MergeConflict };

/** Conflicting changes read to find the ones the caller may see (and to record an acknowledgement). */
const READ_AT_MOST = 1000;

/**
 * The conflicts with main of a branch as one caller may learn them: those on objects the caller
 * may see (at most `limit`, with main's value and the branch's of each attribute), how many more
 * of those there are, and how many the caller may not see (counted, never named).
 */
export interface ConflictsFound {
  count: number;
  shown: MergeConflict[];
  /** Visible conflicts beyond `shown`, and conflicts not examined (beyond the first 1,000). */
  more: number;
  /** Conflicts on objects the caller may not see. */
  hidden: number;
  /** What a merge acknowledging them records: every conflict by object and attribute (at most 1,000). */
  acknowledged: AcknowledgedConflicts;
}

function valuesOf(attrs: Record<string, unknown> | null, names: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const name of names) out[name] = attrs && name in attrs ? attrs[name] : null;
  return out;
}

/**
 * The branch's conflicts with main now, as the context's user may learn them: the first
 * `readAtMost` conflicting changes are examined (the rest are counted).
 */
export async function conflictsFound(
  ctx: Ctx,
  branchId: number,
  limit: number,
  readAtMost = READ_AT_MOST,
): Promise<ConflictsFound> {
  const { count, changes } = await conflictingChanges(ctx, branchId, readAtMost);
  const acknowledged: AcknowledgedConflicts = {
    count,
    conflicts: changes.map((c) => ({
      change: c.id,
      object_type: c.objectType,
      object_id: c.objectId,
      attributes: c.conflicts,
    })),
  };
  if (count === 0) return { count, shown: [], more: 0, hidden: 0, acknowledged };
  const visible = await (await ChangeVisibility.load(ctx)).filter(changes);
  const named = visible.slice(0, limit);
  const mains = await getMainObjects(
    ctx,
    named.map((c) => c.objectId),
  );
  const shown = named.map((c): MergeConflict => {
    const main = mains.get(c.objectId);
    return {
      change: c.id,
      object_type: c.objectType,
      object_id: c.objectId,
      object_repr: changeRepr(ctx, c),
      attributes: c.conflicts,
      main: valuesOf(main && main.objectType === c.objectType ? main.attrs : null, c.conflicts),
      branch: valuesOf(c.modified, c.conflicts),
    };
  });
  return {
    count,
    shown,
    more: visible.length - shown.length + (count - changes.length),
    hidden: changes.length - visible.length,
    acknowledged,
  };
}

/** "sw1: status; dc1: name, status and 2 more you cannot view": each conflicting object and attribute the caller may see. */
export function conflictWords(found: Pick<ConflictsFound, 'shown' | 'more' | 'hidden'>): string {
  const named = found.shown.map((c) => `${c.object_repr}: ${c.attributes.join(', ')}`).join('; ');
  const tails = [
    ...(found.more > 0 ? [`${found.more} more`] : []),
    ...(found.hidden > 0 ? [`${found.hidden} ${named || found.more > 0 ? 'more ' : ''}you cannot view`] : []),
  ];
  return named ? [named, ...tails].join(' and ') : tails.join(' and ');
}

/** The 409 of a merge that would overwrite main's conflicting changes without being told to. */
export function conflictRefusal(branchName: string, found: ConflictsFound): string {
  return `Branch "${branchName}" conflicts with main (${conflictWords(found)}): merging would replace main's values with the branch's. Merge with acknowledge_conflicts to do so, or sync the branch first.`;
}
