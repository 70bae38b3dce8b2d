import type { Ctx } from './context';
import type { BranchRow } from '../db/tables';

/**
 * Extension points around branches. Hooks run inside the transaction of the write that
 * triggered them, so what they write commits or rolls back with it.
 */
export interface BranchHookPayloads {
  /** The branch's changes moved (an object created, updated or deleted in the branch). */
  changesMoved: { branch: BranchRow; objectTypes: string[]; newlyTouchedTypes: string[] };
  synced: { branch: BranchRow };
  merged: { branch: BranchRow };
  reverted: { branch: BranchRow };
  renamed: { branch: BranchRow; oldName: string };
  /** Before the branch and its changes are removed. */
  deleting: { branch: BranchRow };
}

export type BranchHookName = keyof BranchHookPayloads;
type Hook<K extends BranchHookName> = (ctx: Ctx, payload: BranchHookPayloads[K]) => Promise<void>;

export class BranchHooks {
  private readonly hooks: { [K in BranchHookName]: Hook<K>[] } = {
    changesMoved: [],
    synced: [],
    merged: [],
    reverted: [],
    renamed: [],
    deleting: [],
  };

  on<K extends BranchHookName>(name: K, hook: Hook<K>): void {
    this.hooks[name].push(hook);
  }

  async run<K extends BranchHookName>(name: K, ctx: Ctx, payload: BranchHookPayloads[K]): Promise<void> {
    for (const hook of this.hooks[name]) await hook(ctx, payload);
  }
}

/**
 * Consulted before every merge. Returns null to allow, or the reason the merge is refused
 * (answered as 409 with the reason in `detail`, nothing written).
 */
export type MergeValidator = (ctx: Ctx, branch: BranchRow) => Promise<string | null>;

export class MergeValidators {
  private readonly validators: MergeValidator[] = [];
  add(v: MergeValidator): void {
    this.validators.push(v);
  }
  async firstRefusal(ctx: Ctx, branch: BranchRow): Promise<string | null> {
    for (const v of this.validators) {
      const reason = await v(ctx, branch);
      if (reason) return reason;
    }
    return null;
  }
}
