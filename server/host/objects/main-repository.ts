import { sql, type Selectable } from 'kysely';
import type { Ctx } from '../core/context';
import { databaseKind } from '../db/database';
import type { ObjectsTable } from '../db/tables';
import { parseAttributes, type Attributes } from './attributes';
import { refreshChangesOfMany } from './change-conflicts-repository';
import { mainVersion } from './versions';

/** One source-of-truth object as stored: its attributes and timestamps. */
export interface ObjectState {
  id: number;
  objectType: string;
  attrs: Attributes;
  created: string;
  lastUpdated: string;
  /** Which version of the object its context shows (`versions.ts`), as read; absent on a state still to be written. */
  version?: string;
}

const OBJECT_SEQUENCE = 'objects';

function fromRow(row: Selectable<ObjectsTable>): ObjectState {
  return {
    id: row.id,
    objectType: row.object_type,
    attrs: parseAttributes(row.data) ?? {},
    created: row.created,
    lastUpdated: row.last_updated,
    version: mainVersion(row.version, row.last_updated),
  };
}

/**
 * `count` new object ids from the sequence, in one statement (it answers the last; the others
 * are the ones before it). One sequence serves main and every branch, so an object created in a
 * branch keeps its id when the branch merges.
 */
export async function reserveObjectIds(ctx: Ctx, count: number): Promise<number[]> {
  if (count === 0) return [];
  const row = await sql<{ value: number }>`
    INSERT INTO sequences (name, value)
    VALUES (${OBJECT_SEQUENCE}, COALESCE((SELECT MAX(id) FROM objects), 0) + ${count})
    ON CONFLICT (name) DO UPDATE SET value = sequences.value + ${count}
    RETURNING value`.execute(ctx.db);
  const last = Number(row.rows[0]!.value);
  return Array.from({ length: count }, (_, i) => last - count + 1 + i);
}

export async function getMainObject(ctx: Ctx, objectType: string, id: number): Promise<ObjectState | undefined> {
  const row = await ctx.db
    .selectFrom('objects')
    .selectAll()
    .where('object_type', '=', objectType)
    .where('id', '=', id)
    .executeTakeFirst();
  return row ? fromRow(row) : undefined;
}

/**
 * Main's object, held until the transaction ends (PostgreSQL: a shared row lock, so writers of
 * branches never wait for each other; SQLite has one writer anyway): a change written in a
 * branch carries its conflicts with this state, and a write of main's object in another
 * transaction waits for it, then rewrites them (`refreshChangesOfMany`); one committed before it is
 * what it reads.
 */
export async function getMainObjectForWrite(
  ctx: Ctx,
  objectType: string,
  id: number,
): Promise<ObjectState | undefined> {
  let q = ctx.db.selectFrom('objects').selectAll().where('object_type', '=', objectType).where('id', '=', id);
  if (ctx.inTransaction && databaseKind(ctx.db) === 'postgres') q = q.forShare();
  const row = await q.executeTakeFirst();
  return row ? fromRow(row) : undefined;
}

/** Main's objects of several ids (any type), by id. */
export async function getMainObjects(ctx: Ctx, ids: number[]): Promise<Map<number, ObjectState>> {
  const out = new Map<number, ObjectState>();
  for (let i = 0; i < ids.length; i += 500) {
    const rows = await ctx.db
      .selectFrom('objects')
      .selectAll()
      .where('id', 'in', ids.slice(i, i + 500))
      .execute();
    for (const row of rows) out.set(row.id, fromRow(row));
  }
  return out;
}

/** Objects read per query by id. */
const ID_BATCH = 500;

/**
 * Main's objects of one type among these ids, by id, held until the transaction ends as
 * `getMainObjectForWrite` holds one (a few queries for any number).
 */
export async function getMainObjectsForWrite(
  ctx: Ctx,
  objectType: string,
  ids: readonly number[],
): Promise<Map<number, ObjectState>> {
  const out = new Map<number, ObjectState>();
  for (let i = 0; i < ids.length; i += ID_BATCH) {
    let q = ctx.db
      .selectFrom('objects')
      .selectAll()
      .where('object_type', '=', objectType)
      .where('id', 'in', ids.slice(i, i + ID_BATCH));
    if (ctx.inTransaction && databaseKind(ctx.db) === 'postgres') q = q.forShare();
    for (const row of await q.execute()) out.set(row.id, fromRow(row));
  }
  return out;
}

export async function listMainObjects(ctx: Ctx, objectType: string, ids?: number[]): Promise<ObjectState[]> {
  let q = ctx.db.selectFrom('objects').selectAll().where('object_type', '=', objectType);
  if (ids) q = q.where('id', 'in', ids.length > 0 ? ids : [-1]);
  return (await q.orderBy('id').execute()).map(fromRow);
}

/**
 * Writes an object on main as given (insert or replace), timestamps included; the changes of it
 * in branches keep their conflicts with it current.
 */
export async function putMainObject(ctx: Ctx, state: ObjectState): Promise<void> {
  await putMainObjects(ctx, [state]);
}

/**
 * Writes objects on main as given (insert or replace), timestamps included, each moving its
 * version, a few statements for any number; the changes of them in branches keep their conflicts current.
 */
export async function putMainObjects(ctx: Ctx, states: readonly ObjectState[]): Promise<void> {
  // Rows per statement: 5 values each, far within either database's parameter limit.
  const BATCH = 200;
  for (let i = 0; i < states.length; i += BATCH) {
    await ctx.db
      .insertInto('objects')
      .values(
        states.slice(i, i + BATCH).map((state) => ({
          id: state.id,
          object_type: state.objectType,
          data: JSON.stringify(state.attrs),
          created: state.created,
          last_updated: state.lastUpdated,
        })),
      )
      .onConflict((oc) =>
        oc.column('id').doUpdateSet((eb) => ({
          object_type: eb.ref('excluded.object_type'),
          data: eb.ref('excluded.data'),
          created: eb.ref('excluded.created'),
          last_updated: eb.ref('excluded.last_updated'),
          version: eb(eb.ref('objects.version'), '+', 1),
        })),
      )
      .execute();
  }
  await refreshChangesOfMany(ctx, new Map(states.map((s) => [s.id, s])));
}

/** Deletes objects on main (a few statements for any number); the changes of them in branches keep their conflicts current. */
export async function deleteMainObjects(ctx: Ctx, ids: readonly number[]): Promise<void> {
  for (let i = 0; i < ids.length; i += ID_BATCH)
    await ctx.db
      .deleteFrom('objects')
      .where('id', 'in', ids.slice(i, i + ID_BATCH))
      .execute();
  await refreshChangesOfMany(ctx, new Map(ids.map((id) => [id, null])));
}

/** Deletes an object on main; the changes of it in branches keep their conflicts current. */
export async function deleteMainObject(ctx: Ctx, id: number): Promise<void> {
  await deleteMainObjects(ctx, [id]);
}
