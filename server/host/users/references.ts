import type { Ctx } from '../core/context';
import { ValidationError } from '../core/errors';

/** Throws a 400 on `field` naming every id in `ids` that has no row in `table`. */
export async function requireExistingIds(ctx: Ctx, table: 'users' | 'groups', field: string, ids: readonly number[]): Promise<void> {
  const wanted = [...new Set(ids)];
  if (wanted.length === 0) return;
  const rows = await ctx.db.selectFrom(table).select('id').where('id', 'in', wanted).execute();
  const found = new Set(rows.map((r) => r.id));
  const missing = wanted.filter((id) => !found.has(id));
  if (missing.length > 0) {
    const noun = table === 'users' ? 'User' : 'Group';
    throw new ValidationError(
      `${field}: ${missing.map((id) => `${noun} ${id} does not exist.`).join(' ')}`,
      { [field]: missing.map((id) => `${noun} ${id} does not exist.`) },
    );
  }
}

/** Drops a deleted user or group from the `users`/`groups` lists of every permission. */
export async function dropFromPermissions(ctx: Ctx, column: 'users' | 'groups', id: number): Promise<void> {
  const rows = await ctx.db.selectFrom('permissions').select(['id', column]).execute();
  for (const row of rows) {
    const ids = JSON.parse(row[column]) as number[];
    if (!ids.includes(id)) continue;
    await ctx.db
      .updateTable('permissions')
      .set({ [column]: JSON.stringify(ids.filter((x) => x !== id)) })
      .where('id', '=', row.id)
      .execute();
  }
}
