import type { Expression, ExpressionBuilder, SqlBool } from 'kysely';

/**
 * The `tag` filter of a list (a tag's slug; several: any of them): rows whose `id` carries it,
 * in SQL (`tagged_items` is indexed by object type and id).
 */
export function taggedWith(objectType: string, slugs: string[]) {
  return (eb: ExpressionBuilder<any, any>): Expression<SqlBool> =>
    eb(
      'id',
      'in',
      eb
        .selectFrom('tagged_items as ti')
        .innerJoin('tags as t', 't.id', 'ti.tag_id')
        .select('ti.object_id')
        .where('ti.object_type', '=', objectType)
        .where('t.slug', 'in', slugs),
    );
}
