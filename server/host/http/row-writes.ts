import type { z } from 'zod';
import type { ApiObject } from '../core/api-object';
import type { Ctx } from '../core/context';
import { ValidationError } from '../core/errors';
import type { NewRow, RowChanges, TableRows, TextColumn } from '../db/table-rows';

/**
 * How a resource kept in one table row is written: the table, the body (POST and PUT take it
 * whole, PATCH partial), the checks, and the columns of the row.
 */
export interface RowWritesSpec<T extends ApiObject, W extends { name?: string }, Table> {
  table: TableRows<Ctx, Table>;
  body: z.ZodType<W>;
  /** `body.partial()`. */
  partial: z.ZodType<Partial<W>>;
  /** The column holding the object's `name`, unique across the table, and what a taken name answers. */
  uniqueName?: { column: TextColumn<Table>; message: string };
  /** Checks of the input against the object as it is (`null` on create), before anything is written. */
  check?(ctx: Ctx, input: Partial<W>, existing: T | null): Promise<void>;
  /** The new row; `now` is its `created` and `last_updated`; `ctx` says who writes it. */
  insert(input: W, now: string, ctx: Ctx): NewRow<Table>;
  /** The columns the input changes; `now` is the new `last_updated`; `ctx` says who writes it. */
  columns(input: Partial<W>, now: string, ctx: Ctx): RowChanges<Table>;
}

/**
 * The `create`, `update` and `remove` of a `registerResource` spec for a resource kept in one
 * table row, written once: the name stays unique, the checks run, then the row is written with
 * its stamps; a delete removes the row (a resource with more to do on delete declares its own
 * `remove` after these).
 */
export function rowWrites<T extends ApiObject, W extends { name?: string }, Table>(spec: RowWritesSpec<T, W, Table>) {
  const checked = async (ctx: Ctx, input: Partial<W>, existing: T | null): Promise<void> => {
    const unique = spec.uniqueName;
    if (
      unique &&
      input.name !== undefined &&
      (await spec.table.taken(ctx, unique.column, input.name, existing?.id ?? null))
    ) {
      throw ValidationError.field('name', unique.message);
    }
    await spec.check?.(ctx, input, existing);
  };
  return {
    create: {
      body: spec.body,
      run: async (ctx: Ctx, input: W): Promise<number> => {
        await checked(ctx, input, null);
        return spec.table.insert(ctx, spec.insert(input, ctx.host.clock.now().toISOString(), ctx));
      },
    },
    update: {
      body: spec.partial,
      put: spec.body,
      run: async (ctx: Ctx, existing: T, input: Partial<W>): Promise<void> => {
        await checked(ctx, input, existing);
        await spec.table.update(ctx, existing.id, spec.columns(input, ctx.host.clock.now().toISOString(), ctx));
      },
    },
    remove: async (ctx: Ctx, existing: T): Promise<void> => {
      await spec.table.remove(ctx, existing.id);
    },
  };
}
