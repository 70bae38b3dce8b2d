import type { Ctx } from '../core/context';
import { grantAllows, type Grant } from '../users/object-permissions';
import type { BranchRow } from '../db/tables';
import type { Attributes } from './attributes';
import { getMainObjects } from './main-repository';
import { presentObject } from './present';
import { branchAccess } from './branch-access';
import { allBranches } from './branches-repository';

/** What of a changed object a visibility decision reads. */
export interface ChangedObjectRef {
  branchId: number | null;
  objectType: string;
  objectId: number;
  action: 'create' | 'update' | 'delete';
  original: Attributes | null;
  modified: Attributes | null;
  created: string;
  lastUpdated: string;
}

/**
 * Which changed objects a caller may see, for every endpoint that shows a changed object's
 * state (`changes/`, comments anchored to an object, search, the changelog): only those of
 * branches the caller can view, and of objects whose view permission and constraints admit
 * them, evaluated on the branch's state of the object (main's for a delete; the state it had
 * at the branch's baseline when main no longer holds it).
 */
export class ChangeVisibility {
  private constructor(
    private readonly ctx: Ctx,
    private readonly branches: 'all' | ReadonlySet<number>,
    private readonly grants: ReadonlyMap<string, Grant>,
  ) {}

  static async load(ctx: Ctx): Promise<ChangeVisibility> {
    const user = ctx.user;
    const grants = new Map<string, Grant>();
    const catalogue = ctx.host.objectTypes.sourceOfTruth();
    if (!user) {
      for (const def of catalogue) grants.set(def.name, false);
      return new ChangeVisibility(ctx, new Set(), grants);
    }
    const perms = await ctx.host.permissions.forUser(user, ctx.db);
    for (const def of catalogue) grants.set(def.name, perms.grant(def.name, 'view'));
    const access = await branchAccess(ctx);
    let branches: 'all' | Set<number> = 'all';
    if (!access.seesAll) {
      // Reused between writes (any write, a permission's or a branch's included, drops it).
      branches = await ctx.host.readMemo.get(
        ctx,
        `visible-branches|${user.id}|${user.groupIds.join(',')}|${ctx.baseUrl}`,
        async () => {
          const rows: BranchRow[] = await allBranches(ctx);
          return new Set(rows.filter((r) => access.mayView(r)).map((r) => r.id));
        },
      );
    }
    return new ChangeVisibility(ctx, branches, grants);
  }

  /** Nothing is hidden from this caller: every branch and every object of every type. */
  get unrestricted(): boolean {
    return this.branches === 'all' && [...this.grants.values()].every((g) => g === true);
  }

  /** The visible branch ids, or `'all'`. */
  get branchIds(): 'all' | ReadonlySet<number> {
    return this.branches;
  }

  branchVisible(branchId: number | null): boolean {
    return branchId === null || this.branches === 'all' || this.branches.has(branchId);
  }

  /** The caller's view grant on a catalogue type (`true` for any other type: its own permission decides). */
  grant(objectType: string): Grant {
    return this.grants.get(objectType) ?? true;
  }

  /** Catalogue types the caller may view some objects of. */
  viewableTypes(): string[] {
    return [...this.grants].filter(([, g]) => g !== false).map(([t]) => t);
  }

  /** Catalogue types whose view grant has constraints (checked object by object). */
  constrainedTypes(): string[] {
    return [...this.grants].filter(([, g]) => Array.isArray(g)).map(([t]) => t);
  }

  /** Whether the view grant admits the object in this state (an API object's fields). */
  admitsObject(objectType: string, obj: Record<string, unknown>): boolean {
    const grant = this.grant(objectType);
    return grant === true || (grant !== false && grantAllows(grant, obj, this.ctx.user!));
  }

  /** Whether the view grant admits the object with these attributes. */
  admitsState(objectType: string, objectId: number, attrs: Attributes, created: string, lastUpdated: string): boolean {
    const grant = this.grant(objectType);
    if (grant === true || grant === false) return grant;
    const def = this.ctx.host.objectTypes.get(objectType);
    if (!def) return true;
    return grantAllows(
      grant,
      presentObject(this.ctx, def, { id: objectId, objectType, attrs, created, lastUpdated }),
      this.ctx.user!,
    );
  }

  /**
   * The changes the caller may see, in the order given. Main's state is read only for the
   * deletes of constrained types.
   */
  async filter<T extends ChangedObjectRef>(changes: readonly T[]): Promise<T[]> {
    if (this.unrestricted) return [...changes];
    const candidates = changes.filter((c) => this.branchVisible(c.branchId) && this.grant(c.objectType) !== false);
    const deletes = candidates.filter((c) => c.action === 'delete' && Array.isArray(this.grant(c.objectType)));
    const mains =
      deletes.length > 0 ? await getMainObjects(this.ctx, [...new Set(deletes.map((c) => c.objectId))]) : new Map();
    return candidates.filter((c) => {
      if (this.grant(c.objectType) === true) return true;
      if (c.action === 'delete') {
        const main = mains.get(c.objectId);
        if (main && main.objectType === c.objectType)
          return this.admitsState(c.objectType, c.objectId, main.attrs, main.created, main.lastUpdated);
        return c.original !== null && this.admitsState(c.objectType, c.objectId, c.original, c.created, c.lastUpdated);
      }
      return c.modified !== null && this.admitsState(c.objectType, c.objectId, c.modified, c.created, c.lastUpdated);
    });
  }
}
