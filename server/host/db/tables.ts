import type { DataVersionTable } from './data-version';
import type { ColumnType, Generated } from 'kysely';

/**
 * Row types of the host tables. JSON columns hold text; booleans are 0/1 integers;
 * timestamps are ISO 8601 strings (UTC).
 */
export type Id = Generated<number>;
export type Bool = number;
export type Json = string;

export interface UsersTable {
  id: Id;
  username: string;
  password_hash: string | null;
  first_name: string;
  last_name: string;
  email: string;
  is_superuser: Bool;
  is_active: Bool;
  created: string;
  last_updated: string;
}

export interface GroupsTable {
  id: Id;
  name: string;
  description: string;
  created: string;
  last_updated: string;
}

export interface UserGroupsTable {
  user_id: number;
  group_id: number;
}

export interface TokensTable {
  id: Id;
  user_id: number;
  key_hash: string;
  key_prefix: string;
  write_enabled: Bool;
  expires: string | null;
  description: string;
  last_used: string | null;
  created: string;
  last_updated: string;
}

export interface PermissionsTable {
  id: Id;
  name: string;
  description: string;
  enabled: Bool;
  object_types: Json;
  actions: Json;
  constraints: Json | null;
  users: Json;
  groups: Json;
  created: string;
  last_updated: string;
}

/** Source-of-truth objects on main. Ids come from `sequences` so branch-created objects keep theirs. */
export interface ObjectsTable {
  id: number;
  object_type: string;
  data: Json;
  created: string;
  last_updated: string;
  /** Moved by every write of the row: what the object's ETag is made of (`objects/versions.ts`). */
  version: Generated<number>;
}

export interface SequencesTable {
  name: string;
  value: number;
}

export interface BranchesTable {
  id: Id;
  name: string;
  description: string;
  status: string;
  schema_id: string;
  owner: number | null;
  last_sync: string | null;
  merged_time: string | null;
  merged_by: number | null;
  created: string;
  last_updated: string;
  /** Moved by every write of the branch's change rows (`objects/branch-state.ts`). */
  changes_revision: Generated<number>;
}

/** Which revision of a branch's changes each branch state keeper's state reflects. */
export interface BranchStateRevisionsTable {
  branch_id: number;
  keeper: string;
  revision: number;
}

/** One row per object a branch touches: its net effect. */
export interface BranchChangesTable {
  id: Id;
  branch_id: number;
  object_type: string;
  object_id: number;
  action: 'create' | 'update' | 'delete';
  original: Json | null;
  modified: Json | null;
  /** Main's state just before the merge applied this change; used by revert. */
  premerge: Json | null;
  /**
   * The attributes conflicting with main's object now (JSON array; null: none), and why the
   * merge would not apply the change now (null: it would): written with the change and
   * rewritten at every write of main's object, while the branch is not merged
   * (`objects/change-conflicts-repository.ts`).
   */
  conflicts: Json | null;
  merge_problem: string | null;
  created: string;
  last_updated: string;
  /** Moved by every write of the change (its net effect, not its conflicts): the object's ETag in the branch. */
  version: Generated<number>;
}

export interface ObjectChangesTable {
  id: Id;
  time: string;
  user_id: number | null;
  user_name: string;
  request_id: string;
  action: 'create' | 'update' | 'delete';
  changed_object_type: string;
  changed_object_id: number;
  object_repr: string;
  prechange_data: Json | null;
  postchange_data: Json | null;
  branch_id: number | null;
  /** The object this entry's object belongs to (a review's change request), by which callers see it. */
  related_object_type: string | null;
  related_object_id: number | null;
}

export interface WebhooksTable {
  id: Id;
  name: string;
  payload_url: string;
  http_method: string;
  http_content_type: string;
  additional_headers: string;
  body_template: string;
  secret: string;
  ssl_verification: Bool;
  created: string;
  last_updated: string;
}

export interface EventRulesTable {
  id: Id;
  name: string;
  enabled: Bool;
  object_types: Json;
  event_types: Json;
  conditions: Json | null;
  action_type: string;
  action_object_id: number | null;
  action_data: Json | null;
  /** Who wrote the rule last (created it, or changed it since): a writing action acts with their authority. */
  created_by: number | null;
  created: string;
  last_updated: string;
}

/** Durable webhook deliveries, written in the same transaction as the change that caused them. */
export interface WebhookOutboxTable {
  id: Id;
  webhook_id: number;
  event: string;
  url: string;
  method: string;
  headers: Json;
  body: string;
  attempts: number;
  next_attempt_at: string;
  state: 'pending' | 'delivered' | 'failed';
  last_error: string;
  created: string;
  delivered_at: string | null;
}

export interface NotificationsTable {
  id: Id;
  user_id: number;
  object_type: string;
  object_id: number;
  object_repr: string;
  event_type: string;
  read: Bool;
  created: string;
}

/** The first successful answer of a write sent with an `Idempotency-Key`, per caller and key. */
export interface IdempotencyKeysTable {
  user_id: number;
  key: string;
  /** SHA-256 of method, path and query, branch header and body: a repeat must match it. */
  fingerprint: string;
  status: number;
  /** The answer's JSON text; null when it had none (204). */
  body: string | null;
  created: string;
}

export interface TagsTable {
  id: Generated<number>;
  name: string;
  slug: string;
  color: string;
  description: string;
  created: string;
  last_updated: string;
}

export type TagRow = Selectable<TagsTable>;

/** Which object carries which tag (objects of any model, by type and id). */
export interface TaggedItemsTable {
  tag_id: number;
  object_type: string;
  object_id: number;
}

export interface HostTables {
  users: UsersTable;
  groups: GroupsTable;
  user_groups: UserGroupsTable;
  tokens: TokensTable;
  permissions: PermissionsTable;
  objects: ObjectsTable;
  sequences: SequencesTable;
  branches: BranchesTable;
  branch_changes: BranchChangesTable;
  branch_state_revisions: BranchStateRevisionsTable;
  object_changes: ObjectChangesTable;
  webhooks: WebhooksTable;
  event_rules: EventRulesTable;
  webhook_outbox: WebhookOutboxTable;
  notifications: NotificationsTable;
  tags: TagsTable;
  tagged_items: TaggedItemsTable;
  idempotency_keys: IdempotencyKeysTable;
  data_version: DataVersionTable;
  credential_failures: CredentialFailuresTable;
}

/** One failed password attempt under one throttle key (kept for the throttle's window). */
export interface CredentialFailuresTable {
  key: string;
  /** Milliseconds since the epoch. */
  at: number;
}

export type Timestamp = ColumnType<string, string, string>;

import type { Selectable } from 'kysely';
export type BranchRow = Selectable<BranchesTable>;
export type BranchChangeRow = Selectable<BranchChangesTable>;
export type UserRow = Selectable<UsersTable>;
/** A row as read from a table (modules outside the database layer name rows through this, not Kysely). */
export type Row<Table> = Selectable<Table>;
