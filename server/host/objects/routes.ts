import { z } from 'zod';
import { objectBase } from '../../../contract/api/common';
import type { Ctx } from '../core/context';
import {
  BulkRefused,
  DomainError,
  NotFound,
  PermissionDenied,
  PreconditionFailed,
  ValidationError,
} from '../core/errors';
import type { Host } from '../host';
import { grantAllows } from '../users/object-permissions';
import { parseId } from '../http/resource';
import { envelope, parsePage } from '../http/query';
import { Reply, type BulkItem, type QueryParamDoc, type RouteInput } from '../http/routes';
import { ATTRIBUTE_NAME, writableAttributes, type Attributes } from './attributes';
import { parseObjectFilters, parseObjectOrdering } from '../http/object-filters';
import type { ObjectState } from './main-repository';
import { readObject, readObjects } from './overlay';
import { pageObjects } from './object-list-repository';
import { presentObject } from './present';
import { entityTag, ifMatchHolds, parseIfMatch, type IfMatch } from './versions';
import { applyObjectWrites, planObjectWrites, type CatalogueType, type ObjectWrite } from './writes';

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

/**
 * One write a request asks for: a create, an update of an object (its attributes sent, merged
 * for PATCH), a delete; an update or a delete of one object may carry its If-Match.
 */
type ItemWrite =
  | { op: 'create'; body: Attributes }
  | { op: 'update'; id: number; body: Attributes; replace: boolean; ifMatch?: IfMatch }
  | { op: 'delete'; id: number; ifMatch?: IfMatch };

/** The If-Match of a single object's write (undefined: none sent); a malformed one is a 400 naming the header. */
function ifMatchOf(input: RouteInput<unknown>): IfMatch | undefined {
  const header = input.header('If-Match');
  if (header === undefined) return undefined;
  const parsed = parseIfMatch(header);
  if (!parsed)
    throw ValidationError.field(
      'If-Match',
      'Expected "*" or a comma-separated list of entity tags in double quotes, as the ETag header gives them.',
    );
  return parsed;
}

/** A list write names no one version: If-Match belongs to each object's own endpoint. */
function refuseIfMatch(input: RouteInput<unknown>): void {
  if (input.header('If-Match') !== undefined)
    throw ValidationError.field('If-Match', "A list write takes no If-Match: send it with each object's own write.");
}

/** An object's answer (`api`, as presented) with its ETag: the version its context shows now. */
function withETag(api: unknown, state: ObjectState): Reply {
  return new Reply(200, api, state.version ? { ETag: entityTag(state.version) } : undefined);
}

/** A write's answer: the object it left, with its ETag. */
function written(ctx: Ctx, def: CatalogueType, state: ObjectState): Reply {
  return withETag(presentObject(ctx, def, state), state);
}

/**
 * Writes objects of one type as the caller, each item judged as a single write is, before
 * anything is stored: the object must exist in the context and be viewable (else 404); the
 * caller needs the action's object permission on it as it is (403) and, for a create or an
 * update, on its new state (403); the main write guards or the branch rule are asked for the
 * type (the same answer for every item). Answers the error of each item refused (nothing is
 * stored then), else the objects written, in order (undefined for a delete).
 */
async function writeItems(
  ctx: Ctx,
  def: CatalogueType,
  items: readonly ItemWrite[],
): Promise<{ errors: Array<DomainError | undefined>; results?: Array<ObjectState | undefined> }> {
  const user = ctx.user;
  if (!user) throw new PermissionDenied();
  const perms = await ctx.host.permissions.forUser(user, ctx.db);
  const allows = (action: string, state: ObjectState): boolean =>
    grantAllows(perms.grant(def.name, action), presentObject(ctx, def, state), user);
  const errors: Array<DomainError | undefined> = items.map(() => undefined);
  const befores = await readObjects(
    ctx,
    def.name,
    items.flatMap((item) => (item.op === 'create' ? [] : [item.id])),
  );
  const writes: ObjectWrite[] = [];
  const itemOf: number[] = [];
  for (const [i, item] of items.entries()) {
    if (item.op === 'create') {
      writes.push({ op: 'create', attrs: writableAttributes(item.body) });
      itemOf.push(i);
      continue;
    }
    const state = befores.get(item.id);
    if (!state || !allows('view', state)) {
      errors[i] = new NotFound();
      continue;
    }
    if (!allows(item.op === 'update' ? 'change' : 'delete', state)) {
      errors[i] = new PermissionDenied();
      continue;
    }
    if (item.op === 'delete') writes.push({ op: 'delete', existing: state });
    else {
      const sent = writableAttributes(item.body);
      writes.push({ op: 'update', existing: state, attrs: item.replace ? sent : { ...state.attrs, ...sent } });
    }
    itemOf.push(i);
  }
  let plan;
  try {
    plan = await planObjectWrites(ctx, def, writes);
  } catch (err) {
    if (!(err instanceof DomainError)) throw err;
    for (const i of itemOf) errors[i] ??= err;
    return { errors };
  }
  for (const [k, w] of plan.writes.entries()) {
    if (w.op !== 'delete' && !allows(w.op === 'create' ? 'add' : 'change', plan.states[k]!))
      errors[itemOf[k]!] = new PermissionDenied();
  }
  if (errors.some((e) => e !== undefined)) return { errors };
  // The preconditions last: a caller refused anyway learns nothing from them. The versions
  // were read in the write's transaction, which holds the write lock, so none can move before
  // the write.
  for (const [i, item] of items.entries()) {
    if (item.op === 'create' || !item.ifMatch) continue;
    if (!ifMatchHolds(item.ifMatch, befores.get(item.id)?.version))
      errors[i] = new PreconditionFailed(
        `${def.display} ${item.id} has changed since the version If-Match names: read it again (its ETag names the version now), or write without If-Match to overwrite it.`,
      );
  }
  if (errors.some((e) => e !== undefined)) return { errors };
  return { errors, results: await applyObjectWrites(ctx, plan) };
}

/** One write: its error thrown as it is, or the object written. */
async function writeOne(ctx: Ctx, def: CatalogueType, item: ItemWrite): Promise<ObjectState | undefined> {
  const { errors, results } = await writeItems(ctx, def, [item]);
  if (errors[0]) throw errors[0];
  return results![0];
}

/** A bulk write: every item refused answered together, or the objects written, presented. */
async function writeMany(ctx: Ctx, def: CatalogueType, items: readonly ItemWrite[]): Promise<unknown[]> {
  const { errors, results } = await writeItems(ctx, def, items);
  if (!results) throw BulkRefused.of(errors);
  return results.flatMap((state) => (state ? [presentObject(ctx, def, state)] : []));
}

function registerType(host: Host, def: CatalogueType): void {
  const routes = host.routes.group({ path: def.path!, tag: def.appLabel, response: sourceObjectOutput });
  const access = (action: string): { permission: string } => ({ permission: permission(def, action) });

  routes.add({
    method: 'GET',
    access: access('view'),
    summary: `List ${def.display} objects (in the branch of X-NetBox-Branch, else main)`,
    query: LIST_QUERY,
    handler: async ({ ctx, query, url }) => {
      const filters = parseObjectFilters(query);
      const ordering = parseObjectOrdering(query);
      const page = parsePage(query);
      const user = ctx.user;
      if (!user) throw new PermissionDenied();
      const grant = (await ctx.host.permissions.forUser(user, ctx.db)).grant(def.name, 'view');
      if (grant === false) throw new PermissionDenied();
      const { count, items } = await pageObjects(ctx, def, { filters, ordering, page, grant, user });
      return envelope(
        items.map((s) => presentObject(ctx, def, s)),
        count,
        page,
        url,
      );
    },
  });

  routes.add({
    method: 'GET',
    path: ':id/',
    access: access('view'),
    summary: `Retrieve a ${def.display} object`,
    versions: { etag: true },
    handler: async ({ ctx, params }) => {
      const state = await readObject(ctx, def.name, parseId(params.id));
      const user = ctx.user;
      if (!state || !user) throw new NotFound();
      const api = presentObject(ctx, def, state);
      if (!grantAllows((await ctx.host.permissions.forUser(user, ctx.db)).grant(def.name, 'view'), api, user))
        throw new NotFound();
      return withETag(api, state);
    },
  });

  routes.create({
    access: access('add'),
    summary: `Create a ${def.display} object, or a list of them (in the branch of X-NetBox-Branch, else main)`,
    versions: { etag: true },
    body: sourceObjectWrite,
    run: async ({ ctx, body }) => written(ctx, def, (await writeOne(ctx, def, { op: 'create', body }))!),
    bulk: async ({ ctx, body }) =>
      writeMany(
        ctx,
        def,
        body.map((attrs) => ({ op: 'create', body: attrs })),
      ),
  });

  routes.patchAndPut({
    path: ':id/',
    access: access('change'),
    versions: { etag: true, ifMatch: true },
    summary: {
      PATCH: `Partially update a ${def.display} object: the attributes sent are set, the others kept`,
      PUT: `Update a ${def.display} object: its attributes become exactly those sent`,
    },
    body: { PATCH: sourceObjectWrite, PUT: sourceObjectWrite },
    handler: async (input, method) => {
      const { ctx, params, body } = input;
      const ifMatch = ifMatchOf(input);
      const item: ItemWrite = { op: 'update', id: parseId(params.id), body, replace: method === 'PUT', ifMatch };
      return written(ctx, def, (await writeOne(ctx, def, item))!);
    },
    bulk: async (input: RouteInput<Array<BulkItem<Attributes>>>, method) => {
      refuseIfMatch(input);
      return writeMany(
        input.ctx,
        def,
        input.body.map((item) => ({ op: 'update', id: item.id, body: item.body, replace: method === 'PUT' })),
      );
    },
  });

  routes.remove({
    path: ':id/',
    access: access('delete'),
    versions: { ifMatch: true },
    summary: `Delete a ${def.display} object`,
    run: async (input) => {
      const ifMatch = ifMatchOf(input);
      await writeOne(input.ctx, def, { op: 'delete', id: parseId(input.params.id), ifMatch });
    },
    bulk: async (input) => {
      refuseIfMatch(input);
      await writeMany(
        input.ctx,
        def,
        input.body.map((item) => ({ op: 'delete', id: item.id })),
      );
    },
  });
}

/** Registers the endpoints of every source-of-truth type of the catalogue (contract 3.3). */
export function registerObjects(host: Host): void {
  for (const def of host.objectTypes.sourceOfTruth()) {
    if (def.path) registerType(host, def);
  }
}
