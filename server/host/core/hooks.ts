import type { BranchRow } from '../db/tables';

/**
 * Extension points around branches. Hooks run inside the transaction of the write that
 * triggered them, so what they write commits or rolls back with it.
 */
export interface BranchHookPayloads {
  /** The branch's changes moved (an object created, updated or deleted in the branch). */
  changesMoved: { branch: BranchRow; objectTypes: string[]; newlyTouchedTypes: string[] };
  synced: { branch: BranchRow };
  /** `acknowledgedConflicts`: the conflicts with main the merger acknowledged (null: none). */
  merged: { branch: BranchRow; acknowledgedConflicts: AcknowledgedConflicts | null };
  reverted: { branch: BranchRow };
  renamed: { branch: BranchRow; oldName: string };
  /** Before the branch and its changes are removed. */
  deleting: { branch: BranchRow };
}

/** The conflicts with main a merge was told to set aside: how many, and (at most 1,000 of) them. */
export interface AcknowledgedConflicts {
  count: number;
  conflicts: Array<{ change: number; object_type: string; object_id: number; attributes: string[] }>;
}

export type BranchHookName = keyof BranchHookPayloads;
type Hook<C, K extends BranchHookName> = (ctx: C, payload: BranchHookPayloads[K]) => Promise<void>;

/** The branch hooks; `C` is the context hooks run in (the host's `Ctx`). */
export class BranchHooks<C> {
  private readonly hooks: { [K in BranchHookName]: Hook<C, K>[] } = {
    changesMoved: [],
    synced: [],
    merged: [],
    reverted: [],
    renamed: [],
    deleting: [],
  };

  on<K extends BranchHookName>(name: K, hook: Hook<C, K>): void {
    this.hooks[name].push(hook);
  }

  async run<K extends BranchHookName>(name: K, ctx: C, payload: BranchHookPayloads[K]): Promise<void> {
    for (const hook of this.hooks[name]) await hook(ctx, payload);
  }
}

/**
 * Consulted before every merge. Returns null to allow, or the reason the merge is refused
 * (answered as 409 with the reason in `detail`, nothing written).
 */
export type MergeValidator<C> = (ctx: C, branch: BranchRow) => Promise<string | null>;

export class MergeValidators<C> {
  private readonly validators: MergeValidator<C>[] = [];
  add(v: MergeValidator<C>): void {
    this.validators.push(v);
  }
  async firstRefusal(ctx: C, branch: BranchRow): Promise<string | null> {
    for (const v of this.validators) {
      const reason = await v(ctx, branch);
      if (reason) return reason;
    }
    return null;
  }
}
