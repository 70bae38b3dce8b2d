import type { BranchChange } from './branch-change';

/** One change row of a branch written: created (`before` null), changed, or removed (`after` null). */
export interface BranchChangeWrite {
  branchId: number;
  before: BranchChange | null;
  after: BranchChange | null;
}

/**
 * State a plugin keeps per branch, derived from the branch's change rows and kept current by
 * every write of them (`objects/branch-state.ts`); `C` is the context keepers run in (the host's `Ctx`).
 */
export interface BranchStateKeeperOf<C> {
  /** Unique, e.g. `'change-control:policy-matches'`. */
  name: string;
  /**
   * Change rows of one branch were written, in this order (inside their transaction; one for a
   * single write, many for a bulk one); the state was current before them.
   */
  apply(ctx: C, writes: readonly BranchChangeWrite[]): Promise<void>;
  /** Recomputes the state from all the branch's changes. */
  rebuild(ctx: C, branchId: number): Promise<void>;
  /** The branch's changes are gone. */
  drop(ctx: C, branchId: number): Promise<void>;
}

/** The registered branch state keepers, by name (plugins register theirs while they register). */
export class BranchStateKeepers<C> {
  private readonly keepers = new Map<string, BranchStateKeeperOf<C>>();

  register(keeper: BranchStateKeeperOf<C>): void {
    if (this.keepers.has(keeper.name)) throw new Error(`branch state keeper ${keeper.name} is registered twice`);
    this.keepers.set(keeper.name, keeper);
  }

  get(name: string): BranchStateKeeperOf<C> | undefined {
    return this.keepers.get(name);
  }

  all(): BranchStateKeeperOf<C>[] {
    return [...this.keepers.values()];
  }
}
