import type { z } from 'zod';
import { freeze as freezeOutput, freezeWrite } from '../../../../contract/api/freezes';
import { type Ctx, givenFields, ValidationError, type Host } from '../../../host';
import { presentedById, registerResource } from '../../../host/http';
import { fromBool, nowIso } from '../db/database';
import type { FreezeRow } from '../db/tables';
import { sweepAutoMerge } from '../gate/auto-merge';
import { timeMoved } from '../gate/clock-signal';
import { announceFreezeChanged } from '../stream/announce';
import { policyTable } from '../policies/repository';
import { FREEZE_TYPE, MODELS } from '../names';
import { scheduleProblem } from './calendar';
import { freezeList } from './list';
import { freezeTable, presentFreeze, scheduleOf, snapshotFreeze } from './repository';

type FreezeWrite = z.infer<typeof freezeWrite>;

function columns(input: Partial<FreezeWrite>) {
  return {
    ...givenFields(input, ['name', 'description', 'kind', 'start_time', 'end_time', 'time_zone']),
    ...(input.enabled !== undefined ? { enabled: fromBool(input.enabled) } : {}),
    ...(input.start !== undefined
      ? { start_at: input.start === null ? null : new Date(input.start).toISOString() }
      : {}),
    ...(input.end !== undefined ? { end_at: input.end === null ? null : new Date(input.end).toISOString() } : {}),
    ...(input.weekdays !== undefined ? { weekdays: JSON.stringify([...new Set(input.weekdays)].sort()) } : {}),
    ...(input.policy !== undefined ? { policy_id: input.policy } : {}),
  };
}

/** Checks the freeze as it would be stored (the fields taken together), its policy and its unique name. */
async function validate(ctx: Ctx, row: FreezeRow): Promise<void> {
  const problem = scheduleProblem(scheduleOf(row));
  if (problem) throw ValidationError.field(problem.field, problem.message);
  if (row.policy_id !== null && !(await policyTable.exists(ctx, row.policy_id)))
    throw ValidationError.field('policy', `Policy ${row.policy_id} does not exist.`);
  if (await freezeTable.taken(ctx, 'name', row.name, row.id))
    throw ValidationError.field('name', 'A freeze with this name already exists.');
}

/**
 * After a freeze is written: the requests it applies to (before and after the write) hear that
 * their gate may have moved (one event naming the freeze), the gate's clock reads its next
 * instant again, and requests it held back may merge automatically now (the sweep runs after the commit).
 */
async function freezeWritten(ctx: Ctx, id: number, policies: ReadonlyArray<number | null>): Promise<void> {
  for (const policy of new Set(policies)) await announceFreezeChanged(ctx, id, policy);
  timeMoved(ctx);
  const host = ctx.host;
  ctx.afterCommit(async () => {
    await sweepAutoMerge(host);
  });
}

/**
 * `freezes/`: named freeze periods. Managed by holders of `change_control.{view,add,change,delete}_freeze`;
 * a freeze in force blocks merging the requests it applies to (see the merge gate).
 */
export function registerFreezeRoutes(host: Host): void {
  registerResource(host.routes, {
    tag: 'change-control',
    objectType: FREEZE_TYPE,
    path: MODELS.freeze.path,
    output: freezeOutput,
    list: freezeList,
    get: presentedById(freezeTable.byId, presentFreeze),
    snapshot: snapshotFreeze,
    create: {
      body: freezeWrite,
      run: async (ctx, input: FreezeWrite) => {
        const now = nowIso(ctx);
        const kind =
          input.kind ?? (input.weekdays !== undefined || input.start_time !== undefined ? 'recurring' : 'once');
        const values = {
          name: input.name,
          description: '',
          enabled: 1,
          kind,
          start_at: null,
          end_at: null,
          weekdays: '[]',
          start_time: null,
          end_time: null,
          time_zone: 'UTC',
          policy_id: null,
          ...columns(input),
          created: now,
          last_updated: now,
        };
        await validate(ctx, { id: 0, ...values });
        const id = await freezeTable.insert(ctx, values);
        await freezeWritten(ctx, id, [values.policy_id]);
        return id;
      },
    },
    update: {
      body: freezeWrite.partial(),
      put: freezeWrite,
      run: async (ctx, existing, input: Partial<FreezeWrite>) => {
        const before = (await freezeTable.byId(ctx, existing.id))!;
        const next: FreezeRow = { ...before, ...columns(input), last_updated: nowIso(ctx) };
        await validate(ctx, next);
        await freezeTable.update(ctx, existing.id, { ...columns(input), last_updated: next.last_updated });
        await freezeWritten(ctx, existing.id, [before.policy_id, next.policy_id]);
      },
    },
    remove: async (ctx, existing) => {
      await freezeTable.remove(ctx, existing.id);
      await freezeWritten(ctx, existing.id, [existing.policy]);
    },
  });
}
