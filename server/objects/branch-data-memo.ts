import { TransactionMemo } from '../core/read-memo';

/**
 * Reads of branch data (a branch's changes with main's current state and their conflicts),
 * reused within a transaction and between writes. Every writer of main's objects, of branch
 * changes or of branches calls `branchDataMemo.forget(ctx)`.
 */
export const branchDataMemo = new TransactionMemo('branch-data');
