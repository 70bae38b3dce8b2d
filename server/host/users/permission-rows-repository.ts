import type { Queryable } from '../db/database';
import type { PermissionsTable, Row } from '../db/tables';

/**
 * The enabled permissions, on the handle given (the host's, or the caller's transaction): what
 * object permissions are computed from. A raw handle, not the request context, which depends on
 * object permissions.
 */
export function enabledPermissionRows(db: Queryable): Promise<Row<PermissionsTable>[]> {
  return db.selectFrom('permissions').selectAll().where('enabled', '=', 1).execute();
}
