import type { Ctx } from '../core/context';
import type { HostDb } from '../db/database';
import { tableRows } from '../db/table-rows';
import type { Row, TokensTable } from '../db/tables';

/** Tokens by id: read, key taken, insert (answering the stored row), update, delete. */
export const tokenTable = tableRows((ctx: Ctx) => ctx.db, 'tokens');

/** The tokens with any of these ids, of any of these users, with any of these write settings (an absent list: any). */
export function tokensWhere(
  ctx: Ctx,
  filter: { ids?: readonly number[]; userIds?: readonly number[]; writeEnabled?: readonly boolean[] },
): Promise<Row<TokensTable>[]> {
  let q = ctx.db.selectFrom('tokens').selectAll();
  if (filter.ids) q = q.where('id', 'in', [...filter.ids]);
  if (filter.userIds) q = q.where('user_id', 'in', [...filter.userIds]);
  if (filter.writeEnabled)
    q = q.where(
      'write_enabled',
      'in',
      filter.writeEnabled.map((v) => (v ? 1 : 0)),
    );
  return q.execute();
}

/** A token by the hash of its key, with its user (authentication; outside any request's context). */
export function tokenWithUser(db: HostDb, keyHash: string) {
  return db
    .selectFrom('tokens')
    .innerJoin('users', 'users.id', 'tokens.user_id')
    .select([
      'tokens.id as token_id',
      'tokens.write_enabled',
      'tokens.expires',
      'tokens.last_used',
      'users.id as user_id',
      'users.username',
      'users.is_superuser',
      'users.is_active',
    ])
    .where('tokens.key_hash', '=', keyHash)
    .executeTakeFirst();
}

/** The groups of a user (authentication; outside any request's context). */
export async function groupIdsOfTokenUser(db: HostDb, userId: number): Promise<number[]> {
  const rows = await db.selectFrom('user_groups').select('group_id').where('user_id', '=', userId).execute();
  return rows.map((r) => r.group_id);
}

export async function markTokenUsed(db: HostDb, tokenId: number, at: string): Promise<void> {
  await db.updateTable('tokens').set({ last_used: at }).where('id', '=', tokenId).execute();
}
