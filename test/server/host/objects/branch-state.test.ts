import assert from 'node:assert/strict';
import type { Kysely } from 'kysely';
import { sql } from 'kysely';
import { HOST_VERSION } from '../../../../server/host/core/version';
import type { Ctx } from '../../../../server/host/core/context';
import type { HostPlugin } from '../../../../server/host/host';
import { branchChanges, removeChange, saveChange } from '../../../../server/host/objects/branch-changes-repository';
import {
  ensureBranchState,
  type BranchChangeWrite,
  type BranchStateKeeper,
} from '../../../../server/host/objects/branch-state';
import { changesRevision, keeperRevision } from '../../../../server/host/objects/branch-state-repository';
import { BranchStateKeepers } from '../../../../server/host/objects/branch-state-keepers';
import { defaultPlugins } from '../../../../server/plugins';
import { deleteBranch } from '../../../../server/plugins/branching/branches';
import { parseConfig } from '../../../../server/host/core/config';
import { seed, startDomain, type Domain } from '../../../support/domain';
import { Rng } from '../../../support/openapi-fuzz';

/** The probe keeper's state: per branch, how many changes and the sum of their ids and object ids. */
interface ProbeTables {
  bs_probe: { branch_id: number; changes: number; ids: number };
}
const probeDb = (ctx: Ctx) => ctx.db as unknown as Kysely<ProbeTables>;
const KEEPER = 'test:probe';

interface ProbeState {
  changes: number;
  ids: number;
}

/** The full computation the kept state must equal (the oracle). */
async function probeNow(ctx: Ctx, branchId: number): Promise<ProbeState> {
  const changes = await branchChanges(ctx, branchId);
  return { changes: changes.length, ids: changes.reduce((sum, c) => sum + c.id * 1000 + c.objectId, 0) };
}

async function probeKept(ctx: Ctx, branchId: number): Promise<ProbeState> {
  const row = await probeDb(ctx)
    .selectFrom('bs_probe')
    .select(['changes', 'ids'])
    .where('branch_id', '=', branchId)
    .executeTakeFirst();
  return { changes: Number(row?.changes ?? 0), ids: Number(row?.ids ?? 0) };
}

const calls = { apply: 0, rebuild: 0, drop: 0 };

const probe: BranchStateKeeper = {
  name: KEEPER,
  async apply(ctx: Ctx, writes: readonly BranchChangeWrite[]) {
    calls.apply++;
    const weight = (c: BranchChangeWrite['before']) => (c ? c.id * 1000 + c.objectId : 0);
    const kept = await probeKept(ctx, writes[0]!.branchId);
    for (const write of writes) {
      kept.changes += (write.after ? 1 : 0) - (write.before ? 1 : 0);
      kept.ids += weight(write.after) - weight(write.before);
    }
    await store(ctx, writes[0]!.branchId, kept);
  },
  async rebuild(ctx: Ctx, branchId: number) {
    calls.rebuild++;
    await store(ctx, branchId, await probeNow(ctx, branchId));
  },
  async drop(ctx: Ctx, branchId: number) {
    calls.drop++;
    await probeDb(ctx).deleteFrom('bs_probe').where('branch_id', '=', branchId).execute();
  },
};

async function store(ctx: Ctx, branchId: number, state: ProbeState): Promise<void> {
  await probeDb(ctx)
    .insertInto('bs_probe')
    .values({ branch_id: branchId, ...state })
    .onConflict((oc) => oc.column('branch_id').doUpdateSet(state))
    .execute();
}

const probePlugin: HostPlugin = {
  name: 'branch-state-probe',
  version: '1.0.0',
  hostVersion: { min: HOST_VERSION, max: HOST_VERSION },
  migrations: {
    '90-probe-0001': {
      up: async (db: Kysely<any>) => {
        await db.schema
          .createTable('bs_probe')
          .addColumn('branch_id', 'integer', (c) => c.primaryKey())
          .addColumn('changes', 'integer', (c) => c.notNull())
          .addColumn('ids', 'integer', (c) => c.notNull())
          .execute();
      },
    },
  },
  register: (host) => host.branchState.register(probe),
};

describe('branch state kept inside write transactions (revision, keepers, ensureBranchState)', () => {
  let d: Domain;
  before(async () => {
    d = await startDomain({ plugins: [...defaultPlugins(parseConfig({}), process.cwd()), probePlugin] });
  });
  after(async () => d.close());
  beforeEach(() => {
    calls.apply = calls.rebuild = calls.drop = 0;
  });

  const revisionOf = (branchId: number) => changesRevision(d.ctx(), branchId);
  const keptAt = (branchId: number) => keeperRevision(d.ctx(), branchId, KEEPER);

  it('a keeper is registered once per name', () => {
    const keepers = new BranchStateKeepers<Ctx>();
    keepers.register(probe);
    assert.throws(() => keepers.register({ ...probe }), /registered twice/);
    assert.equal(keepers.get(KEEPER), probe);
  });

  it('every change write moves the revision by one; a current keeper is applied to, never rebuilt', async () => {
    const branchId = await seed.branch(d);
    assert.equal(await revisionOf(branchId), 0);
    await ensureBranchState(d.ctx(), KEEPER, branchId);
    assert.equal(calls.rebuild, 1, 'never built: rebuilt once');
    assert.equal(await keptAt(branchId), 0);
    await seed.change(d, branchId, 'dcim.site', 901, { action: 'create', original: null, modified: { name: 'a' } });
    await seed.change(d, branchId, 'dcim.site', 901, { action: 'create', original: null, modified: { name: 'b' } });
    const [change] = await branchChanges(d.ctx(), branchId);
    await d.write((tx) => removeChange(tx, change!.id));
    assert.equal(await revisionOf(branchId), 3);
    assert.equal(await keptAt(branchId), 3);
    assert.equal(calls.apply, 3);
    await ensureBranchState(d.ctx(), KEEPER, branchId);
    assert.equal(calls.rebuild, 1, 'current: not rebuilt');
    assert.deepEqual(await probeKept(d.ctx(), branchId), await probeNow(d.ctx(), branchId));
  });

  it('a keeper behind stays behind through writes, and is rebuilt when read', async () => {
    const branchId = await seed.branch(d);
    await seed.change(d, branchId, 'dcim.site', 902, { action: 'create', original: null, modified: { name: 'a' } });
    assert.equal(calls.apply, 0, 'never built: not applied to');
    assert.equal(await keptAt(branchId), undefined);
    await ensureBranchState(d.ctx(), KEEPER, branchId);
    assert.equal(calls.rebuild, 1);
    assert.equal(await keptAt(branchId), 1);
    // Rows written beside the service move the revision (as the benchmark's seed does).
    await d.write(async (tx) => {
      const now = d.clock.now().toISOString();
      await tx.db
        .insertInto('branch_changes')
        .values({
          branch_id: branchId,
          object_type: 'dcim.site',
          object_id: 903,
          action: 'create',
          original: null,
          modified: '{"name":"x"}',
          premerge: null,
          created: now,
          last_updated: now,
        })
        .execute();
      await tx.db
        .updateTable('branches')
        .set({ changes_revision: sql`changes_revision + 1` })
        .where('id', '=', branchId)
        .execute();
    });
    await seed.change(d, branchId, 'dcim.site', 904, { action: 'create', original: null, modified: { name: 'c' } });
    assert.equal(calls.apply, 0, 'behind: left behind');
    assert.equal(await keptAt(branchId), 1);
    await ensureBranchState(d.ctx(), KEEPER, branchId);
    assert.equal(calls.rebuild, 2);
    assert.equal(await keptAt(branchId), 3);
    assert.deepEqual(await probeKept(d.ctx(), branchId), { changes: 3, ids: (await probeNow(d.ctx(), branchId)).ids });
  });

  it('a write that rolls back leaves the revision, the recorded revision and the state as they were', async () => {
    const branchId = await seed.branch(d);
    await ensureBranchState(d.ctx(), KEEPER, branchId);
    await assert.rejects(
      d.write(async (tx) => {
        await saveChange(tx, branchId, 'dcim.site', 905, { action: 'create', original: null, modified: { name: 'a' } });
        throw new Error('refused');
      }),
      /refused/,
    );
    assert.equal(await revisionOf(branchId), 0);
    assert.equal(await keptAt(branchId), 0);
    assert.deepEqual(await probeKept(d.ctx(), branchId), { changes: 0, ids: 0 });
  });

  it("deleting a branch drops every keeper's state of it", async () => {
    const branchId = await seed.branch(d);
    await seed.change(d, branchId, 'dcim.site', 906, { action: 'create', original: null, modified: { name: 'a' } });
    await ensureBranchState(d.ctx(), KEEPER, branchId);
    await d.write((tx) => deleteBranch(tx, branchId));
    assert.equal(calls.drop, 1);
    assert.equal(
      await probeDb(d.ctx())
        .selectFrom('bs_probe')
        .select('branch_id')
        .where('branch_id', '=', branchId)
        .executeTakeFirst(),
      undefined,
    );
    assert.equal(await keptAt(branchId), undefined);
    // A reader of a branch that is gone has nothing to rebuild.
    await ensureBranchState(d.ctx(), KEEPER, branchId);
    assert.equal(calls.rebuild, 1);
  });

  it('inside a write transaction, a rebuild is seen by the reads that follow it', async () => {
    const branchId = await seed.branch(d);
    await seed.change(d, branchId, 'dcim.site', 907, { action: 'create', original: null, modified: { name: 'a' } });
    await d.write(async (tx) => {
      await ensureBranchState(tx, KEEPER, branchId);
      assert.equal(await keeperRevision(tx, branchId, KEEPER), 1);
      await saveChange(tx, branchId, 'dcim.site', 908, { action: 'create', original: null, modified: { name: 'b' } });
      assert.deepEqual(await probeKept(tx, branchId), await probeNow(tx, branchId));
    });
    assert.equal(calls.apply, 1);
  });

  it('kept state equals the full computation after every step of seeded random sequences', async () => {
    for (let run = 0; run < 4; run++) {
      const rng = new Rng(1000 + run); // seeded, so a failing sequence can be replayed
      const next = (): number => rng.next();
      const pick = <T>(items: T[]): T => items[Math.floor(next() * items.length)]!;
      const branches = [await seed.branch(d), await seed.branch(d)];
      await ensureBranchState(d.ctx(), KEEPER, branches[0]!);
      for (let step = 0; step < 60; step++) {
        const roll = next();
        const branchId = pick(branches);
        const objectId = 1000 + Math.floor(next() * 6);
        if (roll < 0.45) {
          await seed.change(d, branchId, 'dcim.device', objectId, {
            action: 'update',
            original: { name: 'o' },
            modified: { name: `m${step}` },
          });
        } else if (roll < 0.65) {
          const changes = await branchChanges(d.ctx(), branchId);
          if (changes.length > 0) await d.write((tx) => removeChange(tx, pick(changes).id));
        } else if (roll < 0.72) {
          await assert.rejects(
            d.write(async (tx) => {
              await saveChange(tx, branchId, 'dcim.device', objectId, {
                action: 'delete',
                original: { name: 'o' },
                modified: null,
              });
              throw new Error('rolled back');
            }),
          );
        } else if (roll < 0.85) {
          await ensureBranchState(d.ctx(), KEEPER, branchId);
        } else if (roll < 0.92) {
          await d.write((tx) => deleteBranch(tx, branchId));
          branches[branches.indexOf(branchId)] = await seed.branch(d);
        } else {
          await d.write((tx) => ensureBranchState(tx, KEEPER, branchId));
        }
        for (const b of branches) {
          const current = (await keptAt(b)) === (await revisionOf(b));
          if (current)
            assert.deepEqual(
              await probeKept(d.ctx(), b),
              await probeNow(d.ctx(), b),
              `run ${run} step ${step}: branch ${b}`,
            );
        }
      }
      for (const b of branches) {
        await ensureBranchState(d.ctx(), KEEPER, b);
        assert.equal(await keptAt(b), await revisionOf(b));
        assert.deepEqual(await probeKept(d.ctx(), b), await probeNow(d.ctx(), b));
      }
    }
  });
});
