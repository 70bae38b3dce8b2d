import type { Ctx } from '../core/context';
import { ValidationError } from '../core/errors';
import { permissionMemberLists, setPermissionMembers } from './permissions-repository';
import { existingIds } from './users-repository';

/** Throws a 400 on `field` naming every id in `ids` that has no row in `table`. */
export async function requireExistingIds(
  ctx: Ctx,
  table: 'users' | 'groups',
  field: string,
  ids: readonly number[],
): Promise<void> {
  const wanted = [...new Set(ids)];
  if (wanted.length === 0) return;
  const found = await existingIds(ctx, table, wanted);
  const missing = wanted.filter((id) => !found.has(id));
  if (missing.length > 0) {
    const noun = table === 'users' ? 'User' : 'Group';
    throw new ValidationError(`${field}: ${missing.map((id) => `${noun} ${id} does not exist.`).join(' ')}`, {
      [field]: missing.map((id) => `${noun} ${id} does not exist.`),
    });
  }
}

/** Drops a deleted user or group from the `users`/`groups` lists of every permission. */
export async function dropFromPermissions(ctx: Ctx, column: 'users' | 'groups', id: number): Promise<void> {
  for (const row of await permissionMemberLists(ctx, column)) {
    const ids = JSON.parse(row.ids) as number[];
    if (!ids.includes(id)) continue;
    await setPermissionMembers(
      ctx,
      row.id,
      column,
      ids.filter((x) => x !== id),
    );
  }
}
