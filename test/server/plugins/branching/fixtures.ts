import { hashTokenKey, newTokenKey } from '../../../../server/host/core/secrets';
import type { ApiClient, TestService } from '../../../support/service';

/** The paths the branching tests call. */
export const DEVICES = '/api/dcim/devices/';
export const SITES = '/api/dcim/sites/';
export const BRANCHES = '/api/plugins/branching/branches/';
export const CHANGES = '/api/plugins/branching/changes/';

export interface PermissionGrant {
  object_types: string[];
  actions: string[];
  constraints?: Record<string, unknown> | Array<Record<string, unknown>> | null;
}

export interface TestUser {
  id: number;
  client: ApiClient;
}

let counter = 0;

/** A non-superuser with a write-enabled token and the given permissions, written straight into the database. */
export async function createUser(
  svc: TestService,
  username: string,
  grants: PermissionGrant[] = [],
): Promise<TestUser> {
  const db = svc.host.db;
  const now = svc.clock.now().toISOString();
  const user = await db
    .insertInto('users')
    .values({
      username,
      password_hash: null,
      first_name: '',
      last_name: '',
      email: '',
      is_superuser: 0,
      is_active: 1,
      created: now,
      last_updated: now,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  const key = newTokenKey();
  await db
    .insertInto('tokens')
    .values({
      user_id: user.id,
      key_hash: hashTokenKey(key),
      key_prefix: key.slice(0, 6),
      write_enabled: 1,
      expires: null,
      description: '',
      last_used: null,
      created: now,
      last_updated: now,
    })
    .execute();
  for (const grant of grants) {
    await db
      .insertInto('permissions')
      .values({
        name: `test-permission-${++counter}`,
        description: '',
        enabled: 1,
        object_types: JSON.stringify(grant.object_types),
        actions: JSON.stringify(grant.actions),
        constraints: grant.constraints ? JSON.stringify(grant.constraints) : null,
        users: JSON.stringify([user.id]),
        groups: '[]',
        created: now,
        last_updated: now,
      })
      .execute();
  }
  return { id: user.id, client: svc.as(key) };
}

/** Creates a branch as the admin and returns it. */
export async function createBranch(
  svc: TestService,
  name: string,
): Promise<{ id: number; schema_id: string; [key: string]: any }> {
  const res = await svc.admin.post('/api/plugins/branching/branches/', { name });
  if (res.status !== 201) throw new Error(`branch ${name}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/** The changelog rows of an object, oldest first. */
export async function changelogOf(svc: TestService, objectType: string, objectId: number) {
  return svc.host.db
    .selectFrom('object_changes')
    .selectAll()
    .where('changed_object_type', '=', objectType)
    .where('changed_object_id', '=', objectId)
    .orderBy('id')
    .execute();
}
