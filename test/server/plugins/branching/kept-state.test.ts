import assert from 'node:assert/strict';
import { createCtx, deriveCtx, type AuthUser, type Ctx } from '../../../../server/host/core/context';
import { branchChanges } from '../../../../server/host/objects/branch-changes-repository';
import { branchMergeProblems, branchProblems } from '../../../../server/host/objects/change-conflicts-repository';
import { computeConflicts, mergeProblem } from '../../../../server/host/objects/conflicts';
import { getMainObjects } from '../../../../server/host/objects/main-repository';
import { readObject } from '../../../../server/host/objects/overlay';
import { createObject, deleteObject, updateObject, type CatalogueType } from '../../../../server/host/objects/writes';
import { deleteBranch } from '../../../../server/plugins/branching/branches';
import {
  branchChangeCount,
  branchDigest,
  digestOfChanges,
  EMPTY_DIGEST,
} from '../../../../server/plugins/branching/digest';
import { mergeBranch } from '../../../../server/plugins/branching/merge';
import { branchingPlugin } from '../../../../server/plugins/branching/plugin';
import { revertBranch } from '../../../../server/plugins/branching/revert';
import { syncBranch } from '../../../../server/plugins/branching/sync';
import { seed, startDomain, type Domain } from '../../../support/domain';
import { Rng } from '../../../support/openapi-fuzz';

const ADMIN: AuthUser = { id: 0, username: 'kept-admin', isSuperuser: true, groupIds: [], writeEnabled: true };

/** The full computations (the oracle): every change read and taken against main now. */
async function fullProblems(ctx: Ctx, branchId: number) {
  const changes = await branchChanges(ctx, branchId);
  const mains = await getMainObjects(
    ctx,
    changes.map((c) => c.objectId),
  );
  const out = { conflicts: [] as Array<[number, string[]]>, problems: [] as Array<[number, string]> };
  for (const c of changes) {
    const main = mains.get(c.objectId);
    const current = main && main.objectType === c.objectType ? main.attrs : null;
    const conflicts = computeConflicts(c, current);
    if (conflicts) out.conflicts.push([c.id, conflicts]);
    const problem = mergeProblem(c, current, conflicts);
    if (problem) out.problems.push([c.id, problem]);
  }
  return { ...out, digest: digestOfChanges(changes), count: changes.length };
}

async function keptProblems(ctx: Ctx, branchId: number) {
  const conflicts = await branchProblems(ctx, branchId, 'conflicts', 1000);
  const problems = await branchMergeProblems(ctx, branchId, () => true, 1000);
  assert.equal(conflicts.count, conflicts.first.length);
  assert.equal(problems.count, problems.first.length);
  return {
    conflicts: conflicts.first.map((c) => [c.id, c.conflicts!] as [number, string[]]),
    problems: problems.first.map((c) => [c.id, c.problem!] as [number, string]),
    digest: await branchDigest(ctx, branchId),
    count: await branchChangeCount(ctx, branchId),
  };
}

describe('branching: state kept per branch equals the full computation (conflicts, merge problems, digest)', () => {
  let d: Domain;
  let device: CatalogueType;
  before(async () => {
    // Branching alone: no merge validator (change control's gate) in the way of the merges.
    d = await startDomain({ plugins: [branchingPlugin()] });
    device = { ...d.host.objectTypes.get('dcim.device')!, name: 'dcim.device' };
    ADMIN.id = await seed.user(d, 'kept-admin');
  });
  after(async () => d.close());

  const onMain = () => createCtx({ host: d.host, user: ADMIN, requestId: 'unit', baseUrl: 'http://unit' });
  async function inBranch(branchId: number): Promise<Ctx> {
    const row = await d
      .ctx()
      .db.selectFrom('branches')
      .select(['schema_id', 'name'])
      .where('id', '=', branchId)
      .executeTakeFirstOrThrow();
    return createCtx({
      host: d.host,
      user: ADMIN,
      requestId: 'unit',
      baseUrl: 'http://unit',
      branch: { id: branchId, schemaId: row.schema_id, name: row.name },
    });
  }

  it('an empty branch has the digest of the empty state, and the documented digest does not depend on order', async () => {
    const branchId = await seed.branch(d);
    assert.equal(await branchDigest(d.ctx(), branchId), EMPTY_DIGEST);
    const a = { objectType: 'dcim.site', objectId: 1, original: null, modified: { name: 'a', tags: [1, 2] } };
    const b = { objectType: 'dcim.device', objectId: 2, original: { name: 'x' }, modified: null };
    assert.equal(digestOfChanges([a, b]), digestOfChanges([b, a]));
    assert.notEqual(digestOfChanges([a, b]), digestOfChanges([a]));
    assert.notEqual(digestOfChanges([a, a]), digestOfChanges([a]), 'a multiset: a line twice is not the line once');
  });

  it('after every step of seeded random sequences (branch writes, undo, main writes, sync, merge, revert, branch delete)', async () => {
    for (let run = 0; run < 3; run++) {
      const rng = new Rng(7000 + run); // seeded, so a failing sequence can be replayed
      const next = (): number => rng.next();
      const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!;
      const objects: number[] = [];
      for (let i = 0; i < 5; i++)
        objects.push(
          (
            await d.write((tx) =>
              createObject(deriveMain(tx), device, { name: `r${run}-d${i}`, status: 'active', serial: `S${i}` }),
            )
          ).id,
        );
      const branches = [await seed.branch(d), await seed.branch(d)];
      for (let step = 0; step < 70; step++) {
        const roll = next();
        const branchId = pick(branches);
        const status = (
          await d.ctx().db.selectFrom('branches').select('status').where('id', '=', branchId).executeTakeFirstOrThrow()
        ).status;
        const label = `run ${run} step ${step}`;
        try {
          if (roll < 0.4 && status === 'ready') {
            const ctx = await inBranch(branchId);
            const id = pick(objects);
            await d.write(async (tx) => {
              const bctx = withBranch(tx, ctx);
              const existing = await readObject(bctx, 'dcim.device', id);
              const what = next();
              if (!existing) await createObject(bctx, device, { name: `${label}-new` });
              else if (what < 0.55)
                await updateObject(bctx, device, existing, {
                  ...existing.attrs,
                  [pick(['status', 'serial', 'role'])]: `${label}`,
                });
              else if (what < 0.75) {
                // Undo: back to main's state (the original), which drops the change.
                const main = await readObject(deriveMain(tx), 'dcim.device', id);
                if (main) await updateObject(bctx, device, existing, main.attrs);
              } else await deleteObject(bctx, device, existing);
            });
          } else if (roll < 0.65) {
            const id = pick(objects);
            await d.write(async (tx) => {
              const main = deriveMain(tx);
              const existing = await readObject(main, 'dcim.device', id);
              if (!existing)
                objects[objects.indexOf(id)] = (await createObject(main, device, { name: `${label}-main` })).id;
              else if (next() < 0.8)
                await updateObject(main, device, existing, {
                  ...existing.attrs,
                  [pick(['status', 'serial', 'role'])]: `${label}-main`,
                });
              else await deleteObject(main, device, existing);
            });
          } else if (roll < 0.75 && status === 'ready') {
            await syncBranch(onMain(), branchId, { commit: true });
          } else if (roll < 0.83 && status === 'ready') {
            await mergeBranch(onMain(), branchId, { commit: true });
          } else if (roll < 0.9 && status === 'merged') {
            await revertBranch(onMain(), branchId, { commit: true });
          } else if (roll < 0.95) {
            await d.write((tx) => deleteBranch(tx, branchId));
            branches[branches.indexOf(branchId)] = await seed.branch(d);
          }
        } catch (err) {
          // A refused action (a conflict the merge or revert will not take) writes nothing.
          if (!(err instanceof Error) || !/conflict|refus|cannot|only/i.test(err.message)) throw err;
        }
        for (const b of branches) {
          const status = (
            await d.ctx().db.selectFrom('branches').select('status').where('id', '=', b).executeTakeFirstOrThrow()
          ).status;
          const kept = await keptProblems(d.ctx(), b);
          const full = await fullProblems(d.ctx(), b);
          assert.equal(kept.digest, full.digest, `${label}: digest of branch ${b}`);
          assert.equal(kept.count, full.count, `${label}: change count of branch ${b}`);
          // A merged branch's conflicts are not kept; a revert makes them current again.
          if (status !== 'merged')
            assert.deepEqual(
              { conflicts: kept.conflicts, problems: kept.problems },
              { conflicts: full.conflicts, problems: full.problems },
              `${label}: branch ${b}`,
            );
        }
      }
    }
  });

  function deriveMain(tx: Ctx): Ctx {
    return withBranch(tx, null);
  }
});

/** The transaction's context acting as the administrator in another branch (or on main). */
function withBranch(tx: Ctx, target: Ctx | null): Ctx {
  return deriveCtx(tx, { branch: target?.branch ?? null, user: ADMIN });
}
