import type { z } from 'zod';
import type { ApiObject } from '../core/api-object';
import { recordChange } from '../events/changelog';
import type { Ctx } from '../core/context';
import { NotFound, PermissionDenied } from '../core/errors';
import { grantAllows, type Grant } from '../users/object-permissions';
import type { DeclaredList } from '../db/list';
import {
  envelope,
  pageInMemory,
  parseFilters,
  parseListQuery,
  parseOrdering,
  parseShape,
  rejectUnknownParams,
  shapeObject,
  sortObjects,
  type FilterDef,
  type ParsedFilters,
} from './query';
import type { Access, QueryParamDoc, QueryParams, RouteGroup, RouteRegistry } from './routes';

export type { ApiObject };

export type { ListOptions } from '../db/list';

/**
 * A model exposed with the standard REST operations (list, retrieve, create, update,
 * partial update, delete). The resource supplies data access and presentation; this
 * module supplies permissions (with constraints), validation, transactions, the
 * changelog and events, so every model behaves the same.
 */
export interface ResourceSpec<T extends ApiObject, C = never, U = never> {
  tag: string;
  /** `app_label.model`: names the permissions and the changelog's object type. */
  objectType: string;
  /** Collection path, e.g. `/api/users/groups/`. */
  path: string;
  output: z.ZodType;
  /** The resource's list (`defineList`): filters, `q`, ordering, visibility. */
  list: DeclaredList<T>;
  /**
   * The resource applies the caller's view permission, constraints included, itself: its list in
   * SQL (its `visible`: constrained callers are paged by the database, not filtered in code), its
   * `get` answering only objects the caller may view, judged on the same fields as the list.
   */
  appliesViewGrant?: boolean;
  get(ctx: Ctx, id: number): Promise<T | undefined>;
  /** POST: `run` gets what `body` gives and answers the new object's id. */
  create?: { body: z.ZodType<C>; run(ctx: Ctx, input: C): Promise<number> };
  /** PATCH with `body`, PUT with `put` (default: `body`); `run` gets what the schema gives. */
  update?: { body: z.ZodType<U>; put?: z.ZodType<U>; run(ctx: Ctx, existing: T, input: U): Promise<void> };
  /** DELETE; `query` carries its options (`force`). */
  remove?(ctx: Ctx, existing: T, query: QueryParams): Promise<void>;
  /** The query parameters DELETE takes (documented). */
  removeQuery?: QueryParamDoc[];
  /** What the changelog keeps of an object (default: the API object). */
  snapshot?(obj: T): Record<string, unknown>;
  /** Skip the generic changelog (the domain records its own). */
  ownChangelog?: boolean;
}

async function grantFor(ctx: Ctx, objectType: string, action: string): Promise<Grant> {
  if (!ctx.user) return false;
  const perms = await ctx.host.permissions.forUser(ctx.user, ctx.db);
  return perms.grant(objectType, action);
}

/** Loads one object the caller may view, or throws 404. */
export async function getViewable<T extends ApiObject>(
  ctx: Ctx,
  spec: Pick<ResourceSpec<T>, 'objectType' | 'get' | 'appliesViewGrant'>,
  id: number,
): Promise<T> {
  const obj = await spec.get(ctx, id);
  if (!obj || !ctx.user) throw new NotFound();
  if (!spec.appliesViewGrant && !grantAllows(await grantFor(ctx, spec.objectType, 'view'), obj, ctx.user))
    throw new NotFound();
  return obj;
}

/** Throws 403 unless the caller holds `action` on this object. */
export async function requireObjectPermission(
  ctx: Ctx,
  objectType: string,
  action: string,
  obj: Record<string, unknown>,
): Promise<void> {
  if (!ctx.user || !grantAllows(await grantFor(ctx, objectType, action), obj, ctx.user)) {
    throw new PermissionDenied();
  }
}

export function parseId(raw: string | undefined): number {
  if (raw === undefined || !/^\d+$/.test(raw)) throw new NotFound();
  const id = Number.parseInt(raw, 10);
  if (!Number.isSafeInteger(id)) throw new NotFound();
  return id;
}

function permName(objectType: string, action: string): string {
  const [app, model] = objectType.split('.');
  return `${app}.${action}_${model}`;
}

/** The query parameters every list takes: paging, ordering, `q` (what it matches), `brief` and `fields` (of each `noun`). */
export function pagingQueryDocs(words: { ordering: string; q: string; noun: string }): QueryParamDoc[] {
  return [
    { name: 'limit', description: 'Page size (default 50, at most 1000).' },
    { name: 'offset', description: 'Index of the first result.' },
    { name: 'ordering', description: words.ordering },
    { name: 'q', description: words.q },
    { name: 'brief', description: `true: each ${words.noun} as id, url and display only.` },
    { name: 'fields', description: `Only these fields of each ${words.noun}, comma-separated.` },
  ];
}

/**
 * The GET of a list kept in memory (object types, a caller's tokens: a few dozen items), on the
 * group's own path: unknown parameters refused, the filters parsed (their definitions read at
 * request time: choices may grow as plugins register), then `items` answers the matches, which
 * are searched (`q` over `text`), ordered, paged and shaped as every list is.
 */
export function addListInMemory<T extends Record<string, unknown>>(
  routes: RouteGroup,
  list: {
    summary: string;
    /** What `q` matches, in words; `noun` names one item. */
    q: string;
    noun: string;
    filters(): Record<string, FilterDef>;
    ordering: readonly string[];
    items(ctx: Ctx, filters: ParsedFilters): Promise<T[]>;
    text(item: T): string[];
  },
): void {
  routes.add({
    method: 'GET',
    summary: list.summary,
    query: [
      ...pagingQueryDocs({ ordering: 'Field to order by; prefix with - for descending.', q: list.q, noun: list.noun }),
      ...filterQueryDocs(list.filters()),
    ],
    handler: async ({ ctx, query, url }) => {
      const defs = list.filters();
      rejectUnknownParams(query, Object.keys(defs));
      const filters = parseFilters(query, defs, ctx.user?.id ?? null);
      const ordering = parseOrdering(query, list.ordering);
      return pageInMemory(await list.items(ctx, filters), { query, url, ordering, text: list.text });
    },
  });
}

/** The query parameters of filters: each repeatable, described by its definition (or as a filter on its name). */
function filterQueryDocs(filters: Record<string, FilterDef>): QueryParamDoc[] {
  return Object.entries(filters).map(([name, def]) => ({
    name,
    description: def.description ?? `Filter on ${name}.`,
    repeated: true,
  }));
}

/** The query parameters of a list: paging, ordering, `q`, `brief`, `fields` and its filters. */
export function listQueryDocs(
  list: Pick<DeclaredList<unknown>, 'filters' | 'ordering' | 'searchable'>,
): QueryParamDoc[] {
  const docs = pagingQueryDocs({
    ordering: `Fields to order by, comma-separated; prefix with - for descending (${list.ordering.join(', ')}).`,
    q: list.searchable
      ? "Free text: a case-insensitive substring of any of the list's text fields."
      : 'Free text (this list has no text fields: matches nothing when given).',
    noun: 'object',
  });
  return [...docs, ...filterQueryDocs(list.filters)];
}

/** Registers the resource's routes; answers its route group (path, tag, output), for routes of its own. */
export function registerResource<T extends ApiObject, C = never, U = never>(
  registry: RouteRegistry,
  spec: ResourceSpec<T, C, U>,
): RouteGroup {
  const snapshot = (o: T): Record<string, unknown> => (spec.snapshot ? spec.snapshot(o) : { ...o });
  const list = spec.list;
  const routes = registry.group({ path: spec.path, tag: spec.tag, response: spec.output });
  const access = (action: string): Access => ({ permission: permName(spec.objectType, action) });
  const about = (what: string): string => `${what} ${spec.objectType} object`;
  /** The object of the path's id that the caller may view and `action`. */
  const target = async (ctx: Ctx, rawId: string | undefined, action: string): Promise<T> => {
    const existing = await getViewable(ctx, spec, parseId(rawId));
    await requireObjectPermission(ctx, spec.objectType, action, existing);
    return existing;
  };
  /** The changelog entry of a write (unless the domain records its own). */
  const log = async (
    ctx: Ctx,
    action: 'create' | 'update' | 'delete',
    obj: T,
    prechange: Record<string, unknown> | null,
    postchange: Record<string, unknown> | null,
  ): Promise<void> => {
    if (!spec.ownChangelog)
      await recordChange(ctx, {
        action,
        objectType: spec.objectType,
        objectId: obj.id,
        repr: obj.display,
        prechange,
        postchange,
      });
  };
  const { create, update, remove } = spec;

  routes.add({
    method: 'GET',
    access: access('view'),
    summary: `List ${spec.objectType} objects`,
    query: listQueryDocs(list),
    handler: async ({ ctx, query, url }) => {
      const { filters, ordering, search, shape, page } = parseListQuery(query, list, ctx.user?.id ?? null);
      const grant = await grantFor(ctx, spec.objectType, 'view');
      if (grant === false || !ctx.user) throw new PermissionDenied();
      const shaped = (items: T[]): Record<string, unknown>[] => items.map((o) => shapeObject(o, shape));
      if (grant === true || spec.appliesViewGrant) {
        const { count, items } = await list.run(ctx, { filters, ordering, search, page });
        return envelope(shaped(items), count, page, url);
      }
      const user = ctx.user;
      const { items } = await list.run(ctx, { filters, ordering, search, page: null });
      const visible = sortObjects(
        items.filter((o) => grantAllows(grant, o, user)),
        ordering,
      );
      return envelope(shaped(visible.slice(page.offset, page.offset + page.limit)), visible.length, page, url);
    },
  });

  routes.add({
    method: 'GET',
    path: ':id/',
    access: access('view'),
    summary: about('Retrieve a'),
    query: [
      { name: 'brief', description: 'true: the object as id, url and display only.' },
      { name: 'fields', description: 'Only these fields, comma-separated.' },
    ],
    handler: async ({ ctx, params, query }) => {
      const shape = parseShape(query);
      return shapeObject(await getViewable(ctx, spec, parseId(params.id)), shape);
    },
  });

  if (create) {
    routes.create({
      access: access('add'),
      summary: about('Create a'),
      body: create.body,
      run: async ({ ctx, body }) => {
        const id = await create.run(ctx, body);
        const created = await spec.get(ctx, id);
        if (!created) throw new Error(`${spec.objectType} ${id} vanished after create`);
        await requireObjectPermission(ctx, spec.objectType, 'add', created);
        await log(ctx, 'create', created, null, snapshot(created));
        return created;
      },
    });
  }

  if (update) {
    routes.patchAndPut({
      path: ':id/',
      access: access('change'),
      summary: { PATCH: about('Partially update a'), PUT: about('Update a') },
      body: { PATCH: update.body, PUT: update.put ?? update.body },
      handler: async ({ ctx, params, body }) => {
        const existing = await target(ctx, params.id, 'change');
        await update.run(ctx, existing, body);
        const updated = await spec.get(ctx, existing.id);
        if (!updated) throw new NotFound();
        await requireObjectPermission(ctx, spec.objectType, 'change', updated);
        if (!spec.ownChangelog) {
          const pre = snapshot(existing);
          const post = snapshot(updated);
          if (JSON.stringify({ ...pre, last_updated: null }) !== JSON.stringify({ ...post, last_updated: null }))
            await log(ctx, 'update', updated, pre, post);
        }
        return updated;
      },
    });
  }

  if (remove) {
    routes.remove({
      path: ':id/',
      access: access('delete'),
      summary: about('Delete a'),
      query: spec.removeQuery,
      run: async ({ ctx, params, query }) => {
        const existing = await target(ctx, params.id, 'delete');
        await remove(ctx, existing, query);
        await log(ctx, 'delete', existing, snapshot(existing), null);
      },
    });
  }
  return routes;
}
