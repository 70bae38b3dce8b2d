import type { Ctx } from '../../host';
import { userWroteRecords } from './user-records-repository';

/**
 * A user who reviewed or commented is not deleted: reviews and comments are records, and
 * deleting them with their author would withdraw a veto or close an open thread by a side door.
 * Deactivating the account (`is_active: false`) keeps them and stops the user from acting. The
 * refusal says nothing of which requests they are on (the caller may not view them).
 */
export async function userDeletionGuard(ctx: Ctx, userId: number): Promise<string | null> {
  if (!(await userWroteRecords(ctx, userId))) return null;
  return 'This user wrote reviews or change comments, which are kept as records; deactivate the account (is_active: false) instead of deleting it.';
}
