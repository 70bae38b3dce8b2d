import { z } from 'zod';
import { objectBase } from '../../../contract/api/common';
import type { Ctx } from '../core/context';
import { NotFound, PermissionDenied } from '../core/errors';
import type { Host } from '../host';
import { grantAllows } from '../users/object-permissions';
import { parseId, requireObjectPermission, type ApiObject } from '../http/resource';
import { envelope, parsePage, sortObjects } from '../http/query';
import type { QueryParamDoc } from '../http/routes';
import { ATTRIBUTE_NAME, writableAttributes, type Attributes } from './attributes';
import { matchesObjectFilters, parseObjectFilters, parseObjectOrdering } from '../http/object-filters';
import type { ObjectState } from './main-repository';
import { listObjects, readObject } from './overlay';
import { presentObject } from './present';
import { createObject, deleteObject, updateObject, type CatalogueType } from './writes';

/** Any object of the catalogue: the common fields and free-form attributes. */
export const sourceObjectOutput = z.looseObject({ ...objectBase });

/**
 * A write body: free-form attributes whose names are identifiers. The read-only fields
 * (`id, url, display, created, last_updated`) may be sent and are ignored.
 */
export const sourceObjectWrite = z.record(
  z.string().regex(ATTRIBUTE_NAME, {
    error: 'Attribute names are letters, digits and underscores, not starting with a digit.',
  }),
  z.unknown(),
);

const LIST_QUERY: QueryParamDoc[] = [
  { name: 'id', description: 'Object id.', repeated: true },
  { name: 'q', description: 'Case-insensitive substring of the name.', repeated: true },
  { name: '<attribute>', description: 'Any attribute, compared as text (lists match any element).', repeated: true },
  { name: 'limit', description: 'Page size (default 50, at most 1000).' },
  { name: 'offset', description: 'Index of the first result.' },
  { name: 'ordering', description: 'Field to order by; prefix with - for descending.' },
];

function permission(def: CatalogueType, action: string): string {
  return `${def.appLabel}.${action}_${def.model}`;
}

async function viewGrant(ctx: Ctx, def: CatalogueType) {
  if (!ctx.user) return false;
  return (await ctx.host.permissions.forUser(ctx.user, ctx.db)).grant(def.name, 'view');
}

/** The object as the context (main or branch) sees it, if the caller may view it; else 404. */
async function viewable(
  ctx: Ctx,
  def: CatalogueType,
  rawId: string | undefined,
): Promise<{ state: ObjectState; api: ApiObject }> {
  const state = await readObject(ctx, def.name, parseId(rawId));
  if (!state || !ctx.user) throw new NotFound();
  const api = presentObject(ctx, def, state);
  if (!grantAllows(await viewGrant(ctx, def), api, ctx.user)) throw new NotFound();
  return { state, api };
}

function registerType(host: Host, def: CatalogueType): void {
  const routes = host.routes.group({ path: def.path!, tag: def.appLabel, response: sourceObjectOutput });
  const access = (action: string): { permission: string } => ({ permission: permission(def, action) });
  const authorize = (ctx: Ctx, action: string) => async (state: ObjectState) =>
    requireObjectPermission(ctx, def.name, action, presentObject(ctx, def, state));

  routes.add({
    method: 'GET',
    access: access('view'),
    summary: `List ${def.display} objects (in the branch of X-NetBox-Branch, else main)`,
    query: LIST_QUERY,
    handler: async ({ ctx, query, url }) => {
      const filters = parseObjectFilters(query);
      const ordering = parseObjectOrdering(query);
      const page = parsePage(query);
      const grant = await viewGrant(ctx, def);
      const user = ctx.user;
      if (grant === false || !user) throw new PermissionDenied();
      const objects = (await listObjects(ctx, def.name))
        .map((s) => presentObject(ctx, def, s))
        .filter((o) => grantAllows(grant, o, user) && matchesObjectFilters(o, filters));
      const sorted = sortObjects(objects, ordering);
      return envelope(sorted.slice(page.offset, page.offset + page.limit), sorted.length, page, url);
    },
  });

  routes.add({
    method: 'GET',
    path: ':id/',
    access: access('view'),
    summary: `Retrieve a ${def.display} object`,
    handler: async ({ ctx, params }) => (await viewable(ctx, def, params.id)).api,
  });

  routes.create({
    access: access('add'),
    summary: `Create a ${def.display} object (in the branch of X-NetBox-Branch, else main)`,
    body: sourceObjectWrite,
    run: async ({ ctx, body }) => {
      const created = await createObject(ctx, def, writableAttributes(body), { authorize: authorize(ctx, 'add') });
      return presentObject(ctx, def, created);
    },
  });

  const update = async (
    { ctx, params, body }: { ctx: Ctx; params: Record<string, string>; body: Attributes },
    replace: boolean,
  ) => {
    const { state, api } = await viewable(ctx, def, params.id);
    await requireObjectPermission(ctx, def.name, 'change', api);
    const sent = writableAttributes(body);
    const attrs = replace ? sent : { ...state.attrs, ...sent };
    const updated = await updateObject(ctx, def, state, attrs, { authorize: authorize(ctx, 'change') });
    return presentObject(ctx, def, updated);
  };
  routes.patchAndPut({
    path: ':id/',
    access: access('change'),
    summary: {
      PATCH: `Partially update a ${def.display} object: the attributes sent are set, the others kept`,
      PUT: `Update a ${def.display} object: its attributes become exactly those sent`,
    },
    body: { PATCH: sourceObjectWrite, PUT: sourceObjectWrite },
    handler: (input, method) => update(input, method === 'PUT'),
  });

  routes.remove({
    path: ':id/',
    access: access('delete'),
    summary: `Delete a ${def.display} object`,
    run: async ({ ctx, params }) => {
      const { state, api } = await viewable(ctx, def, params.id);
      await requireObjectPermission(ctx, def.name, 'delete', api);
      await deleteObject(ctx, def, state);
    },
  });
}

/** Registers the endpoints of every source-of-truth type of the catalogue (contract 3.3). */
export function registerObjects(host: Host): void {
  for (const def of host.objectTypes.sourceOfTruth()) {
    if (def.path) registerType(host, def);
  }
}
