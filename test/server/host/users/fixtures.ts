import assert from 'node:assert/strict';
import type { ApiClient, TestService } from '../../../support/service';

export interface UserOptions {
  password?: string;
  is_active?: boolean;
  is_superuser?: boolean;
  groups?: number[];
}

export interface PermissionGrant {
  object_types: string[];
  actions: string[];
  constraints?: unknown;
}

export interface Actor {
  id: number;
  username: string;
  key: string;
  client: ApiClient;
}

let counter = 0;

/** Creates a user through the API as admin; returns its id. */
export async function createUser(svc: TestService, username: string, options: UserOptions = {}): Promise<number> {
  const res = await svc.admin.post('/api/users/users/', { username, ...options });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body.id as number;
}

/** Creates a token for a user as admin; returns its key. */
export async function createToken(
  svc: TestService,
  userId: number,
  settings: Record<string, unknown> = {},
): Promise<string> {
  const res = await svc.admin.post('/api/users/tokens/', { user: userId, ...settings });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body.key as string;
}

/** Grants a permission to users and groups as admin; returns its id. */
export async function grant(
  svc: TestService,
  to: { users?: number[]; groups?: number[] },
  permission: PermissionGrant,
): Promise<number> {
  const res = await svc.admin.post('/api/users/permissions/', { name: `perm-${++counter}`, ...permission, ...to });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body.id as number;
}

/** A user holding exactly these permissions, with a token and a client acting as them. */
export async function actor(
  svc: TestService,
  username: string,
  permissions: PermissionGrant[] = [],
  options: UserOptions = {},
): Promise<Actor> {
  const id = await createUser(svc, username, options);
  for (const p of permissions) await grant(svc, { users: [id] }, p);
  const key = await createToken(svc, id);
  return { id, username, key, client: svc.as(key) };
}
