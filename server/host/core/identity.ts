/** The caller, as authenticated from a token. */
export interface AuthUser {
  id: number;
  username: string;
  isSuperuser: boolean;
  groupIds: number[];
  /** False for a read-only token. */
  writeEnabled: boolean;
}

/** A branch chosen with the `X-NetBox-Branch` header. */
export interface BranchRef {
  id: number;
  schemaId: string;
  name: string;
}
