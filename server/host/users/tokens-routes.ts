import { z } from 'zod';
import { token as tokenOutput, type Token } from '../../../contract/api/host';
import { recordChange } from '../events/changelog';
import type { Ctx } from '../core/context';
import { NotFound, PermissionDenied, ValidationError } from '../core/errors';
import type { Host } from '../host';
import { grantAllows } from './object-permissions';
import { hashTokenKey, newTokenKey } from '../core/secrets';
import type { TokensTable, Row } from '../db/tables';
import { addListInMemory, parseId } from '../http/resource';
import type { FilterDef, ParsedFilters } from '../http/query';
import { requireExistingIds } from './references';
import { tokensWhere, tokenTable } from './tokens-repository';
import { briefObject, fieldsOf } from '../core/api-object';

const OBJECT_TYPE = 'users.token';
const PATH = '/api/users/tokens/';

/** A token as presented (its schema, `token`, is in the shared contract: contract/api/host.ts). */
export type TokenOut = Token & { id: number; display: string };

const tokenKey = z
  .string()
  .regex(/^[\x21-\x7e]{40,256}$/, { error: 'A key is 40 to 256 printable characters without spaces.' });
const expires = z.iso
  .datetime({ offset: true, error: 'Enter a date-time with a time zone, e.g. 2026-12-31T23:59:00Z.' })
  .nullable();

/** Token settings a creator chooses (the key is optional: one is generated). */
export const tokenSettings = {
  write_enabled: z.boolean().optional(),
  expires: expires.optional(),
  description: z.string().max(200, { error: 'at most 200 characters' }).optional(),
};

const tokenCreate = z.strictObject({ user: z.number().int().optional(), key: tokenKey.optional(), ...tokenSettings });
const tokenUpdate = z.strictObject({
  user: z.number().int().optional(),
  key: z.unknown().optional(),
  ...tokenSettings,
});
type TokenUpdate = z.infer<typeof tokenUpdate>;

const FILTERS: Record<string, FilterDef> = {
  id: { type: 'int' },
  user_id: { type: 'int', allowMe: true },
  write_enabled: { type: 'bool' },
};
const ORDERING = ['id', 'user', 'created', 'expires', 'last_used'];

function present(ctx: Ctx, row: Row<TokensTable>): TokenOut {
  return {
    ...briefObject(ctx, PATH, row.id, `${row.key_prefix}…`),
    user: row.user_id,
    write_enabled: row.write_enabled === 1,
    ...fieldsOf(row, ['expires', 'description', 'created', 'last_updated', 'last_used']),
  };
}

async function getToken(ctx: Ctx, id: number): Promise<TokenOut | undefined> {
  const row = await tokenTable.byId(ctx, id);
  return row ? present(ctx, row) : undefined;
}

type TokenAction = 'view' | 'add' | 'change' | 'delete';

/** Own tokens are always the caller's to view, add, change and delete; others need `users.<action>_token`. */
async function tokenRule(ctx: Ctx, action: TokenAction): Promise<(token: TokenOut) => boolean> {
  const user = ctx.user;
  if (!user) return () => false;
  const grant = (await ctx.host.permissions.forUser(user, ctx.db)).grant(OBJECT_TYPE, action);
  return (token) => token.user === user.id || grantAllows(grant, token, user);
}

async function mayAct(ctx: Ctx, action: TokenAction, token: TokenOut): Promise<boolean> {
  return (await tokenRule(ctx, action))(token);
}

async function getVisible(ctx: Ctx, rawId: string | undefined): Promise<TokenOut> {
  const token = await getToken(ctx, parseId(rawId));
  if (!token || !(await mayAct(ctx, 'view', token))) throw new NotFound();
  return token;
}

function snapshot(token: TokenOut): Record<string, unknown> {
  const { key: _key, ...rest } = token;
  return rest;
}

export interface NewToken {
  userId: number;
  key?: string;
  write_enabled?: boolean;
  expires?: string | null;
  description?: string;
}

/** Stores a token (its key hashed) and records the change; returns the token with its key, the only time the key is shown. */
export async function createToken(ctx: Ctx, input: NewToken): Promise<TokenOut> {
  const key = input.key ?? newTokenKey();
  const keyHash = hashTokenKey(key);
  if (await tokenTable.taken(ctx, 'key_hash', keyHash))
    throw ValidationError.field('key', 'A token with this key already exists.');
  const now = ctx.host.clock.now().toISOString();
  const row = await tokenTable.insertRow(ctx, {
    user_id: input.userId,
    key_hash: keyHash,
    key_prefix: key.slice(0, 6),
    write_enabled: input.write_enabled === false ? 0 : 1,
    expires: input.expires ? new Date(input.expires).toISOString() : null,
    description: input.description ?? '',
    last_used: null,
    created: now,
    last_updated: now,
  });
  const token = present(ctx, row);
  await recordChange(ctx, {
    action: 'create',
    objectType: OBJECT_TYPE,
    objectId: token.id,
    repr: token.display,
    prechange: null,
    postchange: snapshot(token),
  });
  return { ...token, key };
}

async function listTokens(ctx: Ctx, filters: ParsedFilters): Promise<TokenOut[]> {
  const rows = await tokensWhere(ctx, {
    ids: filters.id as number[] | undefined,
    userIds: filters.user_id as number[] | undefined,
    writeEnabled: filters.write_enabled as boolean[] | undefined,
  });
  return rows.map((r) => present(ctx, r));
}

export function registerTokens(host: Host): void {
  const routes = host.routes.group({
    path: PATH,
    tag: 'users',
    access: { authenticated: true },
    response: tokenOutput,
  });

  addListInMemory(routes, {
    summary: "List tokens (the caller's own, plus those users.view_token shows)",
    q: 'Free text: a case-insensitive substring of the description or display text.',
    noun: 'token',
    filters: () => FILTERS,
    ordering: ORDERING,
    items: async (ctx, filters) => {
      const mayView = await tokenRule(ctx, 'view');
      return (await listTokens(ctx, filters)).filter(mayView);
    },
    text: (t) => [t.description, t.display],
  });

  routes.add({
    method: 'GET',
    path: ':id/',
    summary: 'Retrieve a token (never its key)',
    handler: async ({ ctx, params }) => getVisible(ctx, params.id),
  });

  routes.create({
    summary: 'Create a token; the answer holds its key, shown this once',
    body: tokenCreate,
    run: async ({ ctx, body }) => {
      const input = body;
      const caller = ctx.user;
      if (!caller) throw new PermissionDenied();
      const userId = input.user ?? caller.id;
      if (userId !== caller.id) {
        const perms = await ctx.host.permissions.forUser(caller, ctx.db);
        if (!perms.has('users.add_token')) throw new PermissionDenied('You may only create tokens for yourself.');
        await requireExistingIds(ctx, 'users', 'user', [userId]);
      }
      const { user: _user, ...settings } = input;
      const token = await createToken(ctx, { ...settings, userId });
      if (!(await mayAct(ctx, 'add', token))) throw new PermissionDenied('You may not create this token.');
      return token;
    },
  });

  const update = async (ctx: Ctx, rawId: string | undefined, input: TokenUpdate): Promise<TokenOut> => {
    const existing = await getVisible(ctx, rawId);
    if (!(await mayAct(ctx, 'change', existing))) throw new PermissionDenied();
    if (input.key !== undefined)
      throw ValidationError.field('key', "A token's key cannot be changed; create a new token.");
    if (input.user !== undefined && input.user !== existing.user)
      await requireExistingIds(ctx, 'users', 'user', [input.user]);
    await tokenTable.update(ctx, existing.id, {
      ...(input.user !== undefined ? { user_id: input.user } : {}),
      ...(input.write_enabled !== undefined ? { write_enabled: input.write_enabled ? 1 : 0 } : {}),
      ...(input.expires !== undefined ? { expires: input.expires ? new Date(input.expires).toISOString() : null } : {}),
      ...(input.description !== undefined ? { description: input.description } : {}),
      last_updated: ctx.host.clock.now().toISOString(),
    });
    const updated = await getToken(ctx, existing.id);
    if (!updated) throw new NotFound();
    if (!(await mayAct(ctx, 'change', updated)))
      throw new PermissionDenied('You may not give this token to that user.');
    const pre = snapshot(existing);
    const post = snapshot(updated);
    if (JSON.stringify({ ...pre, last_updated: null }) !== JSON.stringify({ ...post, last_updated: null })) {
      await recordChange(ctx, {
        action: 'update',
        objectType: OBJECT_TYPE,
        objectId: existing.id,
        repr: updated.display,
        prechange: pre,
        postchange: post,
      });
    }
    return updated;
  };

  routes.patchAndPut({
    path: ':id/',
    summary: { PATCH: 'Partially update a token', PUT: 'Update a token' },
    body: { PATCH: tokenUpdate, PUT: tokenUpdate },
    handler: async ({ ctx, params, body }) => update(ctx, params.id, body),
  });

  routes.remove({
    path: ':id/',
    summary: 'Delete a token',
    run: async ({ ctx, params }) => {
      const existing = await getVisible(ctx, params.id);
      if (!(await mayAct(ctx, 'delete', existing))) throw new PermissionDenied();
      await tokenTable.remove(ctx, existing.id);
      await recordChange(ctx, {
        action: 'delete',
        objectType: OBJECT_TYPE,
        objectId: existing.id,
        repr: existing.display,
        prechange: snapshot(existing),
        postchange: null,
      });
    },
  });
}
