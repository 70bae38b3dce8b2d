import { sql, type Kysely, type Migration } from 'kysely';
import { clearedWith, keyedTable, objectRef, ownedBy, pairTable, stamps } from './schema';
import { createDataVersion } from '../data-version';
import { nowText } from '../portable';

async function createHostTables(db: Kysely<unknown>): Promise<void> {
  const now = nowText(db);
  await keyedTable(db, 'users')
    .addColumn('username', 'text', (c) => c.notNull().unique())
    .addColumn('password_hash', 'text')
    .addColumn('first_name', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('last_name', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('email', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('is_superuser', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('is_active', 'integer', (c) => c.notNull().defaultTo(1))
    .$call(stamps(now))
    .execute();

  await keyedTable(db, 'groups')
    .addColumn('name', 'text', (c) => c.notNull().unique())
    .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
    .$call(stamps(now))
    .execute();

  await pairTable(db, 'user_groups', ['user_id', 'users'], ['group_id', 'groups']).execute();
  await db.schema.createIndex('user_groups_group').on('user_groups').column('group_id').execute();

  await keyedTable(db, 'tokens')
    .addColumn('user_id', 'integer', ownedBy('users'))
    .addColumn('key_hash', 'text', (c) => c.notNull().unique())
    .addColumn('key_prefix', 'text', (c) => c.notNull())
    .addColumn('write_enabled', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('expires', 'text')
    .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('last_used', 'text')
    .$call(stamps(now))
    .execute();

  await keyedTable(db, 'permissions')
    .addColumn('name', 'text', (c) => c.notNull().unique())
    .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('enabled', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('object_types', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('actions', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('constraints', 'text')
    .addColumn('users', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('groups', 'text', (c) => c.notNull().defaultTo('[]'))
    .$call(stamps(now))
    .execute();

  await db.schema
    .createTable('sequences')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('value', 'integer', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('objects')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('object_type', 'text', (c) => c.notNull())
    .addColumn('data', 'text', (c) => c.notNull())
    .$call(stamps())
    .execute();
  await db.schema.createIndex('objects_type').on('objects').columns(['object_type', 'id']).execute();

  await keyedTable(db, 'branches')
    .addColumn('name', 'text', (c) => c.notNull().unique())
    .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('schema_id', 'text', (c) => c.notNull().unique())
    .addColumn('owner', 'integer', clearedWith('users'))
    .addColumn('last_sync', 'text')
    .addColumn('merged_time', 'text')
    .addColumn('merged_by', 'integer', clearedWith('users'))
    .$call(stamps())
    .execute();

  await keyedTable(db, 'branch_changes')
    .addColumn('branch_id', 'integer', ownedBy('branches'))
    .$call(objectRef())
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('original', 'text')
    .addColumn('modified', 'text')
    .addColumn('premerge', 'text')
    .$call(stamps())
    .addUniqueConstraint('branch_changes_object', ['branch_id', 'object_type', 'object_id'])
    .execute();

  await keyedTable(db, 'object_changes')
    .addColumn('time', 'text', (c) => c.notNull())
    .addColumn('user_id', 'integer')
    .addColumn('user_name', 'text', (c) => c.notNull())
    .addColumn('request_id', 'text', (c) => c.notNull())
    .addColumn('action', 'text', (c) => c.notNull())
    .$call(objectRef('changed_'))
    .addColumn('object_repr', 'text', (c) => c.notNull())
    .addColumn('prechange_data', 'text')
    .addColumn('postchange_data', 'text')
    .addColumn('branch_id', 'integer')
    .execute();
  await db.schema
    .createIndex('object_changes_object')
    .on('object_changes')
    .columns(['changed_object_type', 'changed_object_id'])
    .execute();
  await db.schema.createIndex('object_changes_request').on('object_changes').column('request_id').execute();

  await keyedTable(db, 'webhooks')
    .addColumn('name', 'text', (c) => c.notNull().unique())
    .addColumn('payload_url', 'text', (c) => c.notNull())
    .addColumn('http_method', 'text', (c) => c.notNull().defaultTo('POST'))
    .addColumn('http_content_type', 'text', (c) => c.notNull().defaultTo('application/json'))
    .addColumn('additional_headers', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('body_template', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('secret', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('ssl_verification', 'integer', (c) => c.notNull().defaultTo(1))
    .$call(stamps())
    .execute();

  await keyedTable(db, 'event_rules')
    .addColumn('name', 'text', (c) => c.notNull().unique())
    .addColumn('enabled', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('object_types', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('event_types', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('conditions', 'text')
    .addColumn('action_type', 'text', (c) => c.notNull())
    .addColumn('action_object_id', 'integer')
    .addColumn('action_data', 'text')
    .$call(stamps())
    .execute();

  await keyedTable(db, 'webhook_outbox')
    .addColumn('webhook_id', 'integer', (c) => c.notNull())
    .addColumn('event', 'text', (c) => c.notNull())
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('method', 'text', (c) => c.notNull())
    .addColumn('headers', 'text', (c) => c.notNull())
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull().defaultTo('pending'))
    .addColumn('last_error', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('created', 'text', (c) => c.notNull())
    .addColumn('delivered_at', 'text')
    .execute();
  await db.schema
    .createIndex('webhook_outbox_due')
    .on('webhook_outbox')
    .columns(['state', 'next_attempt_at'])
    .execute();

  await keyedTable(db, 'notifications')
    .addColumn('user_id', 'integer', ownedBy('users'))
    .$call(objectRef())
    .addColumn('object_repr', 'text', (c) => c.notNull())
    .addColumn('event_type', 'text', (c) => c.notNull())
    .addColumn('read', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('notifications_user').on('notifications').columns(['user_id', 'id']).execute();
}

/** Answers of writes sent with an `Idempotency-Key`, replayed to a repeat of the same request for 24 hours. */
async function createIdempotencyKeys(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('idempotency_keys')
    .addColumn('user_id', 'integer', ownedBy('users'))
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('fingerprint', 'text', (c) => c.notNull())
    .addColumn('status', 'integer', (c) => c.notNull())
    .addColumn('body', 'text')
    .addColumn('created', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('idempotency_keys_pk', ['user_id', 'key'])
    .execute();
  await db.schema.createIndex('idempotency_keys_created').on('idempotency_keys').column('created').execute();
}

/** Who changed objects in a branch (`branchContributors`): one index probe per contributor. */
async function indexObjectChangesByBranch(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex('object_changes_branch_user')
    .on('object_changes')
    .columns(['branch_id', 'user_id', 'changed_object_type'])
    .execute();
}

/** Failed password attempts, shared by every instance of the service (the credential throttle). */
async function createCredentialFailures(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('credential_failures')
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('at', 'integer', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('credential_failures_key').on('credential_failures').columns(['key', 'at']).execute();
  await db.schema.createIndex('credential_failures_at').on('credential_failures').column('at').execute();
}

/** Which branches touch an object type (a policy write re-matches only those). */
async function indexBranchChangesByType(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex('branch_changes_by_type')
    .on('branch_changes')
    .columns(['object_type', 'branch_id'])
    .execute();
}

/** The host's migrations. Kysely runs migrations in name order: host names start "00-", plugins use higher prefixes. Never rename one. */
/** Tags (`/api/extras/tags/`) and their assignment to objects of any model. */
async function createTags(db: Kysely<unknown>): Promise<void> {
  await keyedTable(db, 'tags')
    .addColumn('name', 'text', (c) => c.notNull().unique())
    .addColumn('slug', 'text', (c) => c.notNull().unique())
    .addColumn('color', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull())
    .$call(stamps())
    .execute();
  await db.schema
    .createTable('tagged_items')
    .addColumn('tag_id', 'integer', ownedBy('tags'))
    .$call(objectRef())
    .addPrimaryKeyConstraint('tagged_items_pk', ['tag_id', 'object_type', 'object_id'])
    .execute();
  await db.schema.createIndex('tagged_items_object').on('tagged_items').columns(['object_type', 'object_id']).execute();
}

/**
 * State kept per branch: the revision of the branch's changes (moved by every write of them)
 * and the revision each branch state keeper's state reflects (`objects/branch-state.ts`).
 */
async function createBranchState(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('branches')
    .addColumn('changes_revision', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .createTable('branch_state_revisions')
    .addColumn('branch_id', 'integer', ownedBy('branches'))
    .addColumn('keeper', 'text', (c) => c.notNull())
    .addColumn('revision', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('branch_state_revisions_pk', ['branch_id', 'keeper'])
    .execute();
}

/**
 * Conflicts and merge problems kept per change (`objects/change-conflicts-repository.ts`): the
 * columns, the changes of one object (a write of main's object rewrites them), and per branch
 * the changes that conflict or would not merge (the checks read a count and the first few).
 * Existing rows are filled by the first read of each branch (a keeper never built).
 */
async function keepChangeConflicts(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('branch_changes').addColumn('conflicts', 'text').execute();
  await db.schema.alterTable('branch_changes').addColumn('merge_problem', 'text').execute();
  await db.schema
    .createIndex('branch_changes_by_object')
    .on('branch_changes')
    .columns(['object_id', 'object_type'])
    .execute();
  await db.schema
    .createIndex('branch_changes_conflicting')
    .on('branch_changes')
    .columns(['branch_id', 'id'])
    .where(sql.ref('conflicts'), 'is not', null)
    .execute();
  await db.schema
    .createIndex('branch_changes_merge_problems')
    .on('branch_changes')
    .columns(['branch_id', 'id'])
    .where(sql.ref('merge_problem'), 'is not', null)
    .execute();
}

/**
 * The object a changelog entry's object belongs to (NetBox's `related_object`): a review, check,
 * comment or journal entry names its change request, so the changelog shows the entry only to
 * callers who may view that request, in SQL, also once the object itself is gone.
 */
async function relateObjectChanges(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('object_changes').addColumn('related_object_type', 'text').execute();
  await db.schema.alterTable('object_changes').addColumn('related_object_id', 'integer').execute();
  await db.schema
    .createIndex('object_changes_related')
    .on('object_changes')
    .columns(['related_object_type', 'related_object_id'])
    .execute();
}

/**
 * Who wrote an event rule (`created_by`): a rule whose action writes acts with that user's
 * authority. Rules kept before it was recorded have none, and their writing actions do nothing
 * until someone entitled saves them again.
 */
async function addEventRuleCreator(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('event_rules').addColumn('created_by', 'integer', clearedWith('users')).execute();
}

/**
 * A version per object on main and per change of a branch, moved by every write of its row:
 * what an object's ETag is made of (`objects/versions.ts`), so that two writes within one
 * millisecond still give two versions.
 */
async function addObjectVersions(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('objects')
    .addColumn('version', 'integer', (c) => c.notNull().defaultTo(1))
    .execute();
  await db.schema
    .alterTable('branch_changes')
    .addColumn('version', 'integer', (c) => c.notNull().defaultTo(1))
    .execute();
}

export const hostMigrations: Record<string, Migration> = {
  '00-host-0001-initial': { up: createHostTables },
  '00-host-0002-idempotency-keys': { up: createIdempotencyKeys },
  '00-host-0003-object-changes-by-branch': { up: indexObjectChangesByBranch },
  '00-host-0004-data-version': { up: createDataVersion },
  '00-host-0005-credential-failures': { up: createCredentialFailures },
  '00-host-0006-branch-changes-by-type': { up: indexBranchChangesByType },
  '00-host-0090-tags': { up: createTags },
  '00-host-0091-branch-state': { up: createBranchState },
  '00-host-0092-change-conflicts': { up: keepChangeConflicts },
  '00-host-0100-changelog-related-object': { up: relateObjectChanges },
  '00-host-0101-event-rule-creator': { up: addEventRuleCreator },
  '00-host-0102-object-versions': { up: addObjectVersions },
};
