// Where the diff editor marks a conflict with main: on the line of each attribute that both the
// branch and main changed, on the sides that show it (the branch, main now, main after the
// merge), with both values in words. No VS Code here: extension/vscode/conflict-marks.ts turns
// these into diagnostics.
import type { ChangeDiff } from '../../contract/api/branching';
import { attributeSpans, lineOfAttribute, serializeState, sideState, type ChangeSide } from './change-documents';
import { shortValue } from './merge-confirmation';

export interface ConflictMark {
  attribute: string;
  /** 0-based line of the attribute's key in the side's text. */
  line: number;
  message: string;
}

/** The sides whose text marks conflicts (the baseline predates them). */
const MARKED: readonly ChangeSide[] = ['modified', 'current', 'merged'];

export function conflictMarks(
  change: Pick<ChangeDiff, 'action' | 'original' | 'modified' | 'current' | 'conflicts'>,
  side: ChangeSide,
): ConflictMark[] {
  const conflicts = change.conflicts ?? [];
  if (conflicts.length === 0 || !MARKED.includes(side)) return [];
  const state = sideState(change, side);
  if (!state) return [];
  const spans = attributeSpans(serializeState(state));
  return conflicts.map((attribute) => {
    const main = change.current ? shortValue(change.current[attribute]) : '(deleted)';
    const branch = change.modified ? shortValue(change.modified[attribute]) : '(deleted)';
    return {
      attribute,
      line: lineOfAttribute(spans, attribute).line,
      message: `${attribute} conflicts with main: main changed it to ${main} after the branch was made; the branch has ${branch}. Merging overwrites main's value.`,
    };
  });
}
