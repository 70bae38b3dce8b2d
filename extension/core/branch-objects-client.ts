// The calls that edit a branch's objects: what the user may do in a branch, its objects read
// and written with X-NetBox-Branch, its changes by object, reverting one object to main. Lists
// are read a page at a time: a branch over a main of 100,000 objects is never read whole.
// No VS Code here.
import * as z from 'zod';
import {
  branch as branchSchema,
  branchAccess,
  changeDiff,
  changeRevertResult,
  type Branch,
  type BranchAccess,
  type BranchObjectTypeAccess,
  type ChangeDiff,
  type ChangeRevertResult,
} from '../../contract/api/branching';
import { listOf, objectBase } from '../../contract/api/common';
import { type ApiClient, PATHS, queryString, type Query, type Versioned } from './api-client';

/** An object as the object endpoints show it: the common fields and free-form attributes. */
export const apiObject = z.looseObject({ ...objectBase });
export type ApiObject = z.infer<typeof apiObject>;

export interface Page<T> {
  count: number;
  results: T[];
}

/** One branch as its documents need it: the branch, and what the user may do in it. */
export interface BranchContext {
  branch: Branch;
  access: BranchAccess;
}

export class BranchObjectsClient {
  constructor(readonly client: ApiClient) {}

  /** The branch of that name, or null. */
  async branchNamed(name: string): Promise<Branch | null> {
    const page = await this.client.listPage(branchSchema, PATHS.branches, { name, limit: 2 });
    return page.results.find((b) => b.name === name) ?? null;
  }

  access(branchId: number): Promise<BranchAccess> {
    return this.client.call(branchAccess, 'GET', `${PATHS.branches}${branchId}/access/`);
  }

  async context(name: string): Promise<BranchContext | null> {
    const branch = await this.branchNamed(name);
    return branch ? { branch, access: await this.access(branch.id) } : null;
  }

  /** The list path of a type (its `url` as a path on the client's base URL). */
  private listPath(type: BranchObjectTypeAccess): string {
    return this.client.relative(type.url);
  }

  /** One page of a type's objects as the branch sees them (main's included); `main` reads main instead. */
  listObjects(
    ctx: BranchContext,
    type: BranchObjectTypeAccess,
    query: Query & { limit: number; offset?: number },
    opts: { main?: boolean } = {},
  ): Promise<Page<ApiObject>> {
    return this.client.call(listOf(apiObject), 'GET', `${this.listPath(type)}${queryString(query)}`, undefined, {
      branch: opts.main ? undefined : ctx.branch.schema_id,
    });
  }

  /** An object as the branch shows it (`main`: as main does), with its version there (ETag). */
  getObject(
    ctx: BranchContext,
    type: BranchObjectTypeAccess,
    id: number,
    opts: { main?: boolean } = {},
  ): Promise<Versioned<ApiObject>> {
    return this.client.callVersioned(apiObject, 'GET', `${this.listPath(type)}${id}/`, undefined, {
      branch: opts.main ? undefined : ctx.branch.schema_id,
    });
  }

  createObject(
    ctx: BranchContext,
    type: BranchObjectTypeAccess,
    attrs: Record<string, unknown>,
  ): Promise<Versioned<ApiObject>> {
    return this.client.callVersioned(apiObject, 'POST', this.listPath(type), attrs, { branch: ctx.branch.schema_id });
  }

  /**
   * A full write: the object's attributes become exactly these. With `ifMatch` (an ETag) the
   * service writes only over that version of the object, else refuses (ApiError `stale`).
   */
  replaceObject(
    ctx: BranchContext,
    type: BranchObjectTypeAccess,
    id: number,
    attrs: Record<string, unknown>,
    opts: { ifMatch?: string } = {},
  ): Promise<Versioned<ApiObject>> {
    return this.client.callVersioned(apiObject, 'PUT', `${this.listPath(type)}${id}/`, attrs, {
      branch: ctx.branch.schema_id,
      ...(opts.ifMatch ? { ifMatch: opts.ifMatch } : {}),
    });
  }

  async deleteObject(ctx: BranchContext, type: BranchObjectTypeAccess, id: number): Promise<void> {
    await this.client.request('DELETE', `${this.listPath(type)}${id}/`, undefined, { branch: ctx.branch.schema_id });
  }

  /** One page of the branch's changes of a type (all of them, or those of these objects). */
  changes(
    branchId: number,
    objectType: string,
    query: { objectIds?: readonly number[]; limit: number; offset?: number },
  ): Promise<Page<ChangeDiff>> {
    return this.client.listPage(changeDiff, PATHS.changes, {
      branch_id: branchId,
      object_type: objectType,
      object_id: query.objectIds,
      limit: query.limit,
      offset: query.offset,
    });
  }

  /** The branch's change of one object, if any. */
  async changeOf(branchId: number, objectType: string, objectId: number): Promise<ChangeDiff | null> {
    return (await this.changes(branchId, objectType, { objectIds: [objectId], limit: 1 })).results[0] ?? null;
  }

  /** Undoes the branch's change of one object: the branch shows main's state of it now. */
  revert(changeId: number): Promise<ChangeRevertResult> {
    return this.client.call(changeRevertResult, 'POST', `${PATHS.changes}${changeId}/revert/`, {});
  }
}
