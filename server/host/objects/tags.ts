import type { Ctx } from '../core/context';
import { ValidationError } from '../core/errors';
import { clearTagAssignments, replaceTagAssignments, tagAssignments, tagsNamed } from './tags-repository';

export const TAG_TYPE = 'extras.tag';
export const TAGS_PATH = '/api/extras/tags/';

/** A tag as it shows on a tagged object (NetBox's nested form). */
export interface TagRef {
  id: number;
  url: string;
  display: string;
  name: string;
  slug: string;
  color: string;
}

/** How a write names a tag: its id, its name (a string), or `{id}`, `{name}` or `{slug}`. */
export type TagWrite = number | string | { id: number } | { name: string } | { slug: string };

export function tagUrl(ctx: Ctx, id: number): string {
  return `${ctx.baseUrl}${TAGS_PATH}${id}/`;
}

/** The tags of these objects of one type, each list ordered by name. */
export async function tagsOf(ctx: Ctx, objectType: string, ids: readonly number[]): Promise<Map<number, TagRef[]>> {
  const byObject = new Map<number, TagRef[]>(ids.map((id) => [id, []]));
  if (ids.length === 0) return byObject;
  const rows = await tagAssignments(ctx, objectType, ids);
  for (const r of rows)
    byObject
      .get(r.object_id)
      ?.push({ id: r.id, url: tagUrl(ctx, r.id), display: r.name, name: r.name, slug: r.slug, color: r.color });
  return byObject;
}

/** The ids of the tags a write names; a tag that does not exist is 400 naming `tags`. */
async function resolveTags(ctx: Ctx, refs: readonly TagWrite[]): Promise<number[]> {
  const ids = new Set<number>();
  const names = new Set<string>();
  const slugs = new Set<string>();
  for (const ref of refs) {
    if (typeof ref === 'number') ids.add(ref);
    else if (typeof ref === 'string') names.add(ref);
    else if ('id' in ref) ids.add(ref.id);
    else if ('name' in ref) names.add(ref.name);
    else slugs.add(ref.slug);
  }
  const found = await tagsNamed(ctx, ids, names, slugs);
  const missing = [
    ...[...ids].filter((id) => !found.some((t) => t.id === id)).map((id) => `Tag ${id} does not exist.`),
    ...[...names].filter((n) => !found.some((t) => t.name === n)).map((n) => `Tag "${n}" does not exist.`),
    ...[...slugs].filter((s) => !found.some((t) => t.slug === s)).map((s) => `Tag with slug "${s}" does not exist.`),
  ];
  if (missing.length > 0) throw new ValidationError(`tags: ${missing.join(' ')}`, { tags: missing });
  return [...new Set(found.map((t) => t.id))];
}

/** Replaces an object's tags with those named (a write's `tags` replaces the whole list). */
export async function setTags(
  ctx: Ctx,
  objectType: string,
  objectId: number,
  refs: readonly TagWrite[],
): Promise<void> {
  const tagIds = await resolveTags(ctx, refs);
  await replaceTagAssignments(ctx, objectType, objectId, tagIds);
}

/** Drops an object's tag assignments (the object is deleted). */
export async function clearTags(ctx: Ctx, objectType: string, objectId: number): Promise<void> {
  await clearTagAssignments(ctx, objectType, objectId);
}
