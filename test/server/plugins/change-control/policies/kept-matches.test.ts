import assert from 'node:assert/strict';
import {
  branchChanges,
  removeBranchChanges,
  removeChange,
  saveChange,
} from '../../../../../server/host/objects/branch-changes-repository';
import { changesRevision, keeperRevision } from '../../../../../server/host/objects/branch-state-repository';
import type { Ctx } from '../../../../../server/host';
import { createCtx, deriveCtx, type AuthUser } from '../../../../../server/host/core/context';
import { readObject } from '../../../../../server/host/objects/overlay';
import {
  createObject,
  deleteObject,
  updateObject,
  type CatalogueType,
} from '../../../../../server/host/objects/writes';
import { deleteBranch } from '../../../../../server/plugins/branching/branches';
import { mergeBranch } from '../../../../../server/plugins/branching/merge';
import { revertBranch } from '../../../../../server/plugins/branching/revert';
import { syncBranch } from '../../../../../server/plugins/branching/sync';
import { ccDb } from '../../../../../server/plugins/change-control/db/database';
import {
  ensurePolicyMatches,
  POLICY_MATCHES_KEEPER,
} from '../../../../../server/plugins/change-control/policies/kept-matches';
import { matchBranch, matchBranchFully } from '../../../../../server/plugins/change-control/policies/governing';
import {
  branchMatchCounts,
  matchingDefinitions,
} from '../../../../../server/plugins/change-control/policies/matches-repository';
import { countMatches, type MatchablePolicy } from '../../../../../server/plugins/change-control/policies/matching';
import { seed, startDomain, type Domain } from '../../../../support/domain';
import { Rng } from '../../../../support/openapi-fuzz';
import { GEN_TYPES, randomChange, randomConditions, randomObjectTypes, randomPolicy } from './matching-gen';

/**
 * Policy matching kept per branch (`kept-matches.ts`) against the full computation: after every
 * step of a seeded sequence of change writes, undos, branch deletes and policy creates, edits,
 * enables, disables and deletes, the kept counts equal a count over the branch's change rows and
 * `matchBranch` equals `matchPolicies` over every change.
 */
describe('policies: matching kept per branch', () => {
  let d: Domain;
  let n = 0;
  before(async () => {
    // Without the merge gate: branches merge without a request (matching is what is tested).
    d = await startDomain({ config: { change_control: { enforce_merge_gate: false } } });
  });
  after(async () => d.close());

  async function insertPolicy(tx: Ctx, p: MatchablePolicy): Promise<number> {
    const now = d.clock.now().toISOString();
    const row = await ccDb(tx)
      .insertInto('cc_policies')
      .values({
        name: `kept ${++n}`,
        description: '',
        enabled: 1,
        weight: n % 3,
        object_types: JSON.stringify(p.objectTypes),
        conditions: p.conditions === null ? null : JSON.stringify(p.conditions),
        condition_state: p.conditionState,
        checks: '[]',
        comments: '',
        created: now,
        last_updated: now,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    return row.id;
  }

  const summary = (governing: Awaited<ReturnType<typeof matchBranch>>) =>
    governing.map((g) => [g.policy.id, g.matchedObjectTypes]);

  async function compare(branches: number[], where: string, current: Set<number>): Promise<void> {
    for (const branchId of branches) {
      // The state of a branch kept current by the writes since its last read is never rebuilt.
      if (current.has(branchId)) {
        assert.equal(
          await keeperRevision(d.ctx(), branchId, POLICY_MATCHES_KEEPER),
          await changesRevision(d.ctx(), branchId),
          `${where}: branch ${branchId} kept current`,
        );
      }
      const kept = summary(await matchBranch(d.ctx(), branchId));
      assert.deepEqual(
        kept,
        summary(await matchBranchFully(d.ctx(), branchId)),
        `${where}: branch ${branchId} matches`,
      );
      const counts = (await branchMatchCounts(d.ctx(), branchId)).sort(
        (a, b) => a.policyId - b.policyId || a.objectType.localeCompare(b.objectType),
      );
      const policies = await matchingDefinitions(d.ctx());
      const changes = (await branchChanges(d.ctx(), branchId)).map((c) => ({
        objectType: c.objectType,
        action: c.action,
        original: c.original,
        modified: c.modified,
      }));
      const full = [...countMatches(policies, changes)].flatMap(([policyId, byType]) =>
        [...byType].map(([objectType, matches]) => ({ policyId, objectType, matches })),
      );
      assert.deepEqual(
        counts,
        full.sort((a, b) => a.policyId - b.policyId || a.objectType.localeCompare(b.objectType)),
        `${where}: branch ${branchId} counts`,
      );
      current.add(branchId);
    }
  }

  for (const s of [1, 2, 3, 4, 5, 6]) {
    it(`seed ${s}: kept counts and matches equal the full computation after every step`, async () => {
      const rng = new Rng(s * 7919);
      const branches = [await seed.branch(d), await seed.branch(d), await seed.branch(d)];
      const current = new Set<number>();
      const policyIds: number[] = [];
      await d.write(async (tx) => {
        for (let i = 0; i < 6; i++) policyIds.push(await insertPolicy(tx, randomPolicy(rng, 0)));
        await ensurePolicyMatches(tx);
      });
      for (let step = 0; step < 70; step++) {
        const branchId = rng.pick(branches);
        const roll = rng.next();
        let what: string;
        if (roll < 0.45) {
          const change = randomChange(rng);
          const objectType = rng.pick(GEN_TYPES);
          what = `save ${change.action} ${objectType}`;
          await d.write((tx) =>
            saveChange(tx, branchId, objectType, 1 + rng.int(6), {
              action: change.action,
              original: change.original,
              modified: change.modified,
            }),
          );
        } else if (roll < 0.6) {
          const rows = await branchChanges(d.ctx(), branchId);
          what = 'undo';
          if (rows.length > 0) await d.write((tx) => removeChange(tx, rng.pick(rows).id));
        } else if (roll < 0.64) {
          what = 'branch delete';
          await d.write((tx) => removeBranchChanges(tx, branchId));
          current.delete(branchId);
        } else if (roll < 0.72) {
          what = 'policy create';
          policyIds.push(
            await d.write(async (tx) => {
              const id = await insertPolicy(tx, randomPolicy(rng, 0));
              await ensurePolicyMatches(tx);
              return id;
            }),
          );
        } else if (roll < 0.86 && policyIds.length > 0) {
          // An edit of what matching reads; one in three is written by other means (no recount at the write).
          const id = rng.pick(policyIds);
          const byOtherMeans = rng.chance(0.33);
          what = `policy edit${byOtherMeans ? ' by other means' : ''}`;
          await d.write(async (tx) => {
            const set = rng.int(3);
            await ccDb(tx)
              .updateTable('cc_policies')
              .set(
                set === 0
                  ? { object_types: JSON.stringify(randomObjectTypes(rng)) }
                  : set === 1
                    ? { conditions: JSON.stringify(randomConditions(rng)) }
                    : { condition_state: rng.pick(['either', 'before', 'after'] as const) },
              )
              .where('id', '=', id)
              .execute();
            if (!byOtherMeans) await ensurePolicyMatches(tx);
          });
        } else if (roll < 0.93 && policyIds.length > 0) {
          what = 'policy enable/disable';
          await d.write((tx) =>
            ccDb(tx)
              .updateTable('cc_policies')
              .set({ enabled: rng.int(2) })
              .where('id', '=', rng.pick(policyIds))
              .execute(),
          );
        } else if (policyIds.length > 0) {
          what = 'policy delete';
          const id = policyIds.splice(rng.int(policyIds.length), 1)[0]!;
          await d.write((tx) => ccDb(tx).deleteFrom('cc_policies').where('id', '=', id).execute());
        } else what = 'nothing';
        await compare(branches, `seed ${s}, step ${step} (${what})`, current);
      }
    });
  }

  it("through the service's own writes: branch writes, undo, main writes, sync, merge, revert and branch delete", async () => {
    const admin: AuthUser = {
      id: await seed.user(d, 'kept-matches-admin'),
      username: 'kept-matches-admin',
      isSuperuser: true,
      groupIds: [],
      writeEnabled: true,
    };
    const device: CatalogueType = { ...d.host.objectTypes.get('dcim.device')!, name: 'dcim.device' };
    const onMain = () => createCtx({ host: d.host, user: admin, requestId: 'unit', baseUrl: 'http://unit' });
    const as = (tx: Ctx, branch: Ctx['branch']) => deriveCtx(tx, { branch, user: admin });
    async function branchOf(branchId: number): Promise<Ctx['branch']> {
      const row = await d
        .ctx()
        .db.selectFrom('branches')
        .select(['schema_id', 'name'])
        .where('id', '=', branchId)
        .executeTakeFirstOrThrow();
      return { id: branchId, schemaId: row.schema_id, name: row.name };
    }
    const rng = new Rng(4242);
    await d.write(async (tx) => {
      await insertPolicy(tx, {
        id: 0,
        objectTypes: ['dcim.device'],
        conditions: { attr: 'status', op: 'changed' },
        conditionState: 'either',
      });
      await insertPolicy(tx, {
        id: 0,
        objectTypes: ['dcim.device'],
        conditions: { attr: 'snapshots.prechange.status', value: 'active' },
        conditionState: 'either',
      });
      await insertPolicy(tx, {
        id: 0,
        objectTypes: [],
        conditions: { attr: 'role', value: 'core', negate: true },
        conditionState: 'after',
      });
      await ensurePolicyMatches(tx);
    });
    const objects: number[] = [];
    for (let i = 0; i < 5; i++)
      objects.push(
        (await d.write((tx) => createObject(as(tx, null), device, { name: `km-${i}`, status: 'active', role: 'edge' })))
          .id,
      );
    const branches = [await seed.branch(d), await seed.branch(d)];
    const current = new Set<number>();
    for (let step = 0; step < 60; step++) {
      const branchId = rng.pick(branches);
      const status = (
        await d.ctx().db.selectFrom('branches').select('status').where('id', '=', branchId).executeTakeFirstOrThrow()
      ).status;
      const roll = rng.next();
      let what = 'nothing';
      try {
        if (roll < 0.4 && status === 'ready') {
          const branch = await branchOf(branchId);
          const id = rng.pick(objects);
          what = 'branch write';
          await d.write(async (tx) => {
            const bctx = as(tx, branch);
            const existing = await readObject(bctx, 'dcim.device', id);
            const how = rng.next();
            if (!existing)
              await createObject(bctx, device, { name: `km-${step}`, status: rng.pick(['active', 'planned']) });
            else if (how < 0.55)
              await updateObject(bctx, device, existing, {
                ...existing.attrs,
                [rng.pick(['status', 'role'])]: rng.pick(['active', 'planned', 'core', 'edge']),
              });
            else if (how < 0.75) {
              what = 'undo';
              const main = await readObject(as(tx, null), 'dcim.device', id);
              if (main) await updateObject(bctx, device, existing, main.attrs);
            } else await deleteObject(bctx, device, existing);
          });
        } else if (roll < 0.6) {
          const id = rng.pick(objects);
          what = 'main write';
          await d.write(async (tx) => {
            const main = as(tx, null);
            const existing = await readObject(main, 'dcim.device', id);
            if (!existing)
              objects[objects.indexOf(id)] = (
                await createObject(main, device, { name: `km-main-${step}`, status: 'active' })
              ).id;
            else if (rng.chance(0.8))
              await updateObject(main, device, existing, {
                ...existing.attrs,
                status: rng.pick(['active', 'planned', 'offline']),
              });
            else await deleteObject(main, device, existing);
          });
        } else if (roll < 0.72 && status === 'ready') {
          what = 'sync';
          await syncBranch(onMain(), branchId, { commit: true });
        } else if (roll < 0.82 && status === 'ready') {
          what = 'merge';
          await mergeBranch(onMain(), branchId, { commit: true });
        } else if (roll < 0.9 && status === 'merged') {
          what = 'revert';
          await revertBranch(onMain(), branchId, { commit: true });
        } else if (roll < 0.95) {
          what = 'branch delete';
          await d.write((tx) => deleteBranch(tx, branchId));
          branches[branches.indexOf(branchId)] = await seed.branch(d);
        }
      } catch (err) {
        // A refused action (a conflict a merge or revert will not take) writes nothing.
        if (!(err instanceof Error) || !/conflict|refus|cannot|only/i.test(err.message)) throw err;
      }
      await compare(branches, `step ${step} (${what})`, current);
    }
  });

  it('a branch written beside the service (more changes than one page) is counted whole on its first read', async () => {
    const rng = new Rng(99);
    const branchId = await seed.branch(d);
    await d.write(async (tx) => {
      for (let i = 0; i < 5; i++) await insertPolicy(tx, randomPolicy(rng, 0));
      await ensurePolicyMatches(tx);
    });
    const now = d.clock.now().toISOString();
    await d.write(async (tx) => {
      for (let start = 0; start < 4500; start += 500) {
        const rows = Array.from({ length: 500 }, (_, i) => {
          const c = randomChange(rng);
          return {
            branch_id: branchId,
            object_type: c.objectType,
            object_id: 100_000 + start + i,
            action: c.action,
            original: c.original && JSON.stringify(c.original),
            modified: c.modified && JSON.stringify(c.modified),
            premerge: null,
            created: now,
            last_updated: now,
          };
        });
        await tx.db.insertInto('branch_changes').values(rows).execute();
      }
      // As a bulk writer must: the branch's changes revision moves, so kept state is rebuilt.
      await tx.db
        .updateTable('branches')
        .set((eb) => ({ changes_revision: eb('changes_revision', '+', 1) }))
        .where('id', '=', branchId)
        .execute();
    });
    await compare([branchId], 'bulk-written branch', new Set());
  });
});
