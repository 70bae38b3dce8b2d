import { z } from 'zod';
import { tag as tagOutput, tagWrite } from '../../../contract/api/host';
import type { Ctx } from '../core/context';
import { ValidationError } from '../core/errors';
import type { Host } from '../host';
import type { TagRow } from '../db/tables';
import { registerResource, type ApiObject } from '../http/resource';
import { rowReads } from '../http/row-reads';
import { TAG_TYPE, TAGS_PATH, tagUrl } from './tags';
import { deleteTag, tagRows, tagTable } from './tags-repository';

type TagOut = z.infer<typeof tagOutput> & ApiObject;
type TagWriteInput = z.infer<typeof tagWrite>;

function present(ctx: Ctx, row: TagRow): TagOut {
  return {
    id: row.id,
    url: tagUrl(ctx, row.id),
    display: row.name,
    name: row.name,
    slug: row.slug,
    color: row.color,
    description: row.description,
    created: row.created,
    last_updated: row.last_updated,
  };
}

/** One tag and the tags list. */
const tags = rowReads({
  from: tagRows,
  byId: tagTable.byId,
  present,
  columnFilters: { name: 'string', slug: 'string', color: 'string' },
  ordering: { id: 'id', name: 'name', slug: 'slug', created: 'created' },
  defaultOrdering: [{ field: 'name', desc: false }],
  search: ['name', 'slug', 'description'],
});

async function requireUnique(ctx: Ctx, input: Partial<TagWriteInput>, exceptId: number | null): Promise<void> {
  for (const field of ['name', 'slug'] as const) {
    const value = input[field];
    if (value === undefined) continue;
    if (await tagTable.taken(ctx, field, value, exceptId))
      throw ValidationError.field(field, `A tag with this ${field} already exists.`);
  }
}

/** `/api/extras/tags/`: tags for policies, rules, change requests and reviews (permissions `extras.*_tag`). */
export function registerTags(host: Host): void {
  registerResource(host.routes, {
    tag: 'extras',
    objectType: TAG_TYPE,
    path: TAGS_PATH,
    output: tagOutput,
    list: tags.list,
    get: tags.get,
    create: {
      body: tagWrite,
      run: async (ctx, input: TagWriteInput) => {
        await requireUnique(ctx, input, null);
        const now = ctx.host.clock.now().toISOString();
        return tagTable.insert(ctx, {
          name: input.name,
          slug: input.slug,
          color: input.color ?? '9e9e9e',
          description: input.description ?? '',
          created: now,
          last_updated: now,
        });
      },
    },
    update: {
      body: tagWrite.partial(),
      put: tagWrite,
      run: async (ctx, existing, input: Partial<TagWriteInput>) => {
        await requireUnique(ctx, input, existing.id);
        await tagTable.update(ctx, existing.id, { ...input, last_updated: ctx.host.clock.now().toISOString() });
      },
    },
    remove: async (ctx, existing) => {
      await deleteTag(ctx, existing.id);
    },
  });
}
