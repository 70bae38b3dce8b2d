import { TransactionMemo } from '../core/read-memo';

/**
 * Reads derived from branch data (a branch's changes with main's current state and their
 * conflicts, and the policies matching them), reused within a transaction and between writes.
 * Every writer of main's objects, of branch changes, of branches or of policies calls
 * `branchDataMemo.forget(ctx)`.
 */
export const branchDataMemo = new TransactionMemo('branch-data');
