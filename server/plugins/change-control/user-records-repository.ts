import type { Ctx } from '../../host';
import { ccDb } from './db/database';

/** Whether a user wrote any review or change comment: records that name the user. */
export async function userWroteRecords(ctx: Ctx, userId: number): Promise<boolean> {
  const db = ccDb(ctx);
  const review = await db.selectFrom('cc_reviews').select('id').where('reviewer_id', '=', userId).limit(1).execute();
  if (review.length > 0) return true;
  const comment = await db
    .selectFrom('cc_change_comments')
    .select('id')
    .where('author_id', '=', userId)
    .limit(1)
    .execute();
  return comment.length > 0;
}
