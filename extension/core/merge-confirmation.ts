// The words of the merge confirmation: when the branch conflicts with main, what the merge
// overwrites there (each object and attribute, main's value now and the branch's), and a button
// that says the acknowledgement in words. From the request's changes (`conflicts`, `current`)
// before asking, or from the service's refusal (409 with `conflicts`) when main moved meanwhile.
// No VS Code here.
import type { ChangeDiff, MergeConflict } from '../../contract/api/branching';

/** One attribute the merge overwrites on main. */
export interface OverwrittenValue {
  object: string;
  objectType: string;
  attribute: string;
  main: unknown;
  branch: unknown;
  /** The object is gone on main, or the branch deletes it. */
  mainGone: boolean;
  branchDeletes: boolean;
}

const has = (state: Record<string, unknown> | null | undefined, key: string) =>
  !!state && Object.prototype.hasOwnProperty.call(state, key);

/** What a merge of these changes would overwrite on main, from the changes the service lists. */
export function overwrittenByChanges(
  changes: readonly Pick<ChangeDiff, 'object_repr' | 'object_type' | 'action' | 'modified' | 'current' | 'conflicts'>[],
): OverwrittenValue[] {
  return changes.flatMap((c) =>
    (c.conflicts ?? []).map((attribute) => ({
      object: c.object_repr,
      objectType: c.object_type,
      attribute,
      main: has(c.current, attribute) ? c.current![attribute] : undefined,
      branch: has(c.modified, attribute) ? c.modified![attribute] : undefined,
      mainGone: c.current === null,
      branchDeletes: c.action === 'delete',
    })),
  );
}

/** The same from the service's refusal of a merge (409 `conflicts`). */
export function overwrittenByRefusal(conflicts: readonly MergeConflict[]): OverwrittenValue[] {
  return conflicts.flatMap((c) =>
    c.attributes.map((attribute) => ({
      object: c.object_repr,
      objectType: c.object_type,
      attribute,
      main: has(c.main, attribute) ? c.main![attribute] : undefined,
      branch: has(c.branch, attribute) ? c.branch![attribute] : undefined,
      mainGone: c.main === null,
      branchDeletes: c.branch === null,
    })),
  );
}

const MAX_SHOWN = 20;

/** A value as a short, readable text. */
export function shortValue(value: unknown): string {
  if (value === undefined) return '(none)';
  if (value === null) return 'null';
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return text.length > 60 ? `${text.slice(0, 57)}…` : text;
}

/** "• sw1 (dcim.device) · rack: main now R3 → the branch's R2". */
export function overwrittenLine(v: OverwrittenValue): string {
  const main = v.mainGone ? 'deleted on main' : `main now ${shortValue(v.main)}`;
  const branch = v.branchDeletes ? 'the branch deletes it' : `the branch's ${shortValue(v.branch)}`;
  return `• ${v.object} (${v.objectType}) · ${v.attribute}: ${main} → ${branch}`;
}

export interface MergeConfirmation {
  message: string;
  detail: string;
  /** The button that confirms: for a conflicting merge, the acknowledgement in words. */
  confirm: string;
  /** Whether confirming acknowledges conflicts (sent as `acknowledge_conflicts`). */
  acknowledges: boolean;
}

export function mergeConfirmation(
  title: string,
  branchName: string,
  overwritten: readonly OverwrittenValue[],
  opts: { refusal?: string } = {},
): MergeConfirmation {
  // The service refused for conflicts the caller may not see: its words, and the acknowledgement.
  if (overwritten.length === 0 && opts.refusal)
    return {
      message: `Merge "${title}"? It overwrites main's changes.`,
      detail: opts.refusal,
      confirm: "Overwrite Main's Values and Merge",
      acknowledges: true,
    };
  if (overwritten.length === 0)
    return {
      message: `Merge "${title}"?`,
      detail: `Branch ${branchName} is merged into main: its changes are applied to main and the change request is completed.`,
      confirm: 'Merge',
      acknowledges: false,
    };
  const objects = new Set(overwritten.map((v) => `${v.objectType} ${v.object}`)).size;
  const n = overwritten.length;
  const shown = overwritten.slice(0, MAX_SHOWN).map(overwrittenLine);
  if (n > MAX_SHOWN) shown.push(`… and ${n - MAX_SHOWN} more (the Changed Objects view marks each conflict).`);
  return {
    message: `Merge "${title}"? It overwrites main's changes to ${objects} object${objects === 1 ? '' : 's'}.`,
    detail: [
      `Main changed ${n === 1 ? 'this value' : 'these values'} after branch ${branchName} was made; merging replaces main's ${n === 1 ? 'value' : 'values'} with the branch's:`,
      '',
      ...shown,
      '',
      `Merge only if the branch's ${n === 1 ? 'value is' : 'values are'} what main should have.`,
    ].join('\n'),
    confirm: `Overwrite ${n === 1 ? "Main's Value" : `${n} Values on Main`} and Merge`,
    acknowledges: true,
  };
}
