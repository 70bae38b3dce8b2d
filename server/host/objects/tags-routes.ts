import { z } from 'zod';
import { tag as tagOutput, tagWrite } from '../../../contract/api/host';
import type { Ctx } from '../core/context';
import { ValidationError } from '../core/errors';
import type { Host } from '../host';
import type { TagRow } from '../db/tables';
import { defineList } from '../db/list';
import { registerResource, type ApiObject } from '../http/resource';
import { TAG_TYPE, TAGS_PATH, tagUrl } from './tags';

type TagOut = z.infer<typeof tagOutput> & ApiObject;
type TagWriteInput = z.infer<typeof tagWrite>;

function present(ctx: Ctx, row: TagRow): TagOut {
  return { id: row.id, url: tagUrl(ctx, row.id), display: row.name, name: row.name, slug: row.slug, color: row.color, description: row.description, created: row.created, last_updated: row.last_updated };
}

const tagList = defineList({
  name: 'tags',
  from: (ctx: Ctx) => ctx.db.selectFrom('tags').selectAll(),
  filters: {
    id: { type: 'int', column: 'id' },
    name: { type: 'string', column: 'name' },
    slug: { type: 'string', column: 'slug' },
    color: { type: 'string', column: 'color' },
  },
  ordering: { id: 'id', name: 'name', slug: 'slug', created: 'created' },
  defaultOrdering: [{ field: 'name', desc: false }],
  search: ['name', 'slug', 'description'],
  present: async (ctx, rows) => rows.map((r) => present(ctx, r)),
});

async function requireUnique(ctx: Ctx, input: Partial<TagWriteInput>, exceptId: number | null): Promise<void> {
  for (const field of ['name', 'slug'] as const) {
    const value = input[field];
    if (value === undefined) continue;
    let q = ctx.db.selectFrom('tags').select('id').where(field, '=', value);
    if (exceptId !== null) q = q.where('id', '!=', exceptId);
    if (await q.executeTakeFirst()) throw ValidationError.field(field, `A tag with this ${field} already exists.`);
  }
}

/** `/api/extras/tags/`: tags for policies, rules, change requests and reviews (permissions `extras.*_tag`). */
export function registerTags(host: Host): void {
  registerResource(host.routes, {
    tag: 'extras',
    objectType: TAG_TYPE,
    path: TAGS_PATH,
    output: tagOutput,
    list: tagList,
    get: async (ctx, id) => {
      const row = await ctx.db.selectFrom('tags').selectAll().where('id', '=', id).executeTakeFirst();
      return row ? present(ctx, row) : undefined;
    },
    create: {
      body: tagWrite,
      run: async (ctx, input: TagWriteInput) => {
        await requireUnique(ctx, input, null);
        const now = ctx.host.clock.now().toISOString();
        const row = await ctx.db
          .insertInto('tags')
          .values({ name: input.name, slug: input.slug, color: input.color ?? '9e9e9e', description: input.description ?? '', created: now, last_updated: now })
          .returning('id')
          .executeTakeFirstOrThrow();
        return row.id;
      },
    },
    update: {
      body: tagWrite.partial(),
      put: tagWrite,
      run: async (ctx, existing, input: Partial<TagWriteInput>) => {
        await requireUnique(ctx, input, existing.id);
        await ctx.db
          .updateTable('tags')
          .set({ ...input, last_updated: ctx.host.clock.now().toISOString() })
          .where('id', '=', existing.id)
          .execute();
      },
    },
    remove: async (ctx, existing) => {
      // Assignments go with the tag (ON DELETE CASCADE, and explicitly for databases without it).
      await ctx.db.deleteFrom('tagged_items').where('tag_id', '=', existing.id).execute();
      await ctx.db.deleteFrom('tags').where('id', '=', existing.id).execute();
    },
  });
}
