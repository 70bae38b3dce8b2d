import { sql, type Kysely, type Migration } from 'kysely';
import { clearedWith, databaseKind, keyedTable, objectRef, ownedBy, pairTable, stamps } from '../../../host';
import { digestOfChanges, formerDigestOfChanges } from '../../branching';

async function createTables(db: Kysely<unknown>): Promise<void> {
  await keyedTable(db, 'cc_policies')
    .addColumn('name', 'text', (c) => c.notNull().unique())
    .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('enabled', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('weight', 'integer', (c) => c.notNull().defaultTo(1000))
    .addColumn('object_types', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('conditions', 'text')
    .addColumn('condition_state', 'text', (c) => c.notNull().defaultTo('either'))
    .addColumn('checks', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('comments', 'text', (c) => c.notNull().defaultTo(''))
    .$call(stamps())
    .execute();

  await keyedTable(db, 'cc_policy_rules')
    .addColumn('policy_id', 'integer', ownedBy('cc_policies'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('min_reviews', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('groups', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('users', 'text', (c) => c.notNull().defaultTo('[]'))
    .$call(stamps())
    .addUniqueConstraint('cc_policy_rules_name', ['policy_id', 'name'])
    .execute();

  await keyedTable(db, 'cc_change_requests')
    .addColumn('branch_id', 'integer', clearedWith('branches'))
    .addColumn('branch_name', 'text', (c) => c.notNull())
    .addColumn('branch_deleted', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('ref', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('draft'))
    .addColumn('priority', 'text', (c) => c.notNull().defaultTo('medium'))
    .addColumn('requester_id', 'integer', clearedWith('users'))
    .addColumn('scheduled_start', 'text')
    .addColumn('scheduled_end', 'text')
    .addColumn('auto_merge', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('comments', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('gates_cleared', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('has_conflicts', 'integer', (c) => c.notNull().defaultTo(0))
    .$call(stamps())
    .execute();
  await db.schema
    .createIndex('cc_change_requests_branch')
    .on('cc_change_requests')
    .column('branch_id')
    .unique()
    .execute();
  await db.schema.createIndex('cc_change_requests_status').on('cc_change_requests').columns(['status', 'id']).execute();
  await db.schema
    .createIndex('cc_change_requests_gates')
    .on('cc_change_requests')
    .columns(['gates_cleared', 'id'])
    .execute();
  await db.schema
    .createIndex('cc_change_requests_conflicts')
    .on('cc_change_requests')
    .columns(['has_conflicts', 'id'])
    .execute();

  await pairTable(
    db,
    'cc_change_request_policies',
    ['change_request_id', 'cc_change_requests'],
    ['policy_id', 'cc_policies'],
  )
    .addColumn('matched_object_types', 'text', (c) => c.notNull().defaultTo('[]'))
    .execute();
  await db.schema.createIndex('cc_crp_policy').on('cc_change_request_policies').column('policy_id').execute();

  await keyedTable(db, 'cc_reviews')
    .addColumn('change_request_id', 'integer', ownedBy('cc_change_requests'))
    .addColumn('reviewer_id', 'integer', ownedBy('users'))
    .addColumn('decision', 'text', (c) => c.notNull())
    .addColumn('comment', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('stale', 'integer', (c) => c.notNull().defaultTo(0))
    .$call(stamps())
    .addUniqueConstraint('cc_reviews_one_per_reviewer', ['change_request_id', 'reviewer_id'])
    .execute();

  await keyedTable(db, 'cc_change_comments')
    .addColumn('change_request_id', 'integer', ownedBy('cc_change_requests'))
    .addColumn('change_diff_id', 'integer')
    .$call(objectRef('change_'))
    .addColumn('change_label', 'text', (c) => c.notNull())
    .addColumn('text', 'text', (c) => c.notNull())
    .addColumn('author_id', 'integer', ownedBy('users'))
    .addColumn('parent_id', 'integer', (c) => c.references('cc_change_comments.id').onDelete('cascade'))
    .addColumn('resolved', 'integer', (c) => c.notNull().defaultTo(0))
    .$call(stamps())
    .execute();
  await db.schema
    .createIndex('cc_comments_request')
    .on('cc_change_comments')
    .columns(['change_request_id', 'id'])
    .execute();

  await keyedTable(db, 'cc_merge_checks')
    .addColumn('change_request_id', 'integer', ownedBy('cc_change_requests'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('label', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('pending'))
    .addColumn('summary', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('details_url', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('completed', 'text')
    .$call(stamps())
    .addUniqueConstraint('cc_merge_checks_name', ['change_request_id', 'name'])
    .execute();
  await db.schema
    .createIndex('cc_merge_checks_status')
    .on('cc_merge_checks')
    .columns(['status', 'change_request_id'])
    .execute();

  await keyedTable(db, 'cc_merge_jobs')
    .addColumn('change_request_id', 'integer', ownedBy('cc_change_requests'))
    .addColumn('branch_id', 'integer', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('detail', 'text', (c) => c.notNull().defaultTo(''))
    .$call(stamps())
    .execute();
  // The database itself refuses a second live merge job for a branch.
  await sql`CREATE UNIQUE INDEX cc_merge_jobs_one_live ON cc_merge_jobs (branch_id) WHERE state IN ('pending', 'scheduled', 'running')`.execute(
    db,
  );
}

async function addCachedApprovalCheckKindAndReviewerQueue(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('cc_change_requests')
    .addColumn('approved', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .alterTable('cc_merge_checks')
    .addColumn('kind', 'text', (c) => c.notNull().defaultTo('reported'))
    .execute();
  await pairTable(
    db,
    'cc_outstanding_reviewers',
    ['change_request_id', 'cc_change_requests'],
    ['user_id', 'users'],
  ).execute();
  await db.schema
    .createIndex('cc_outstanding_reviewers_user')
    .on('cc_outstanding_reviewers')
    .columns(['user_id', 'change_request_id'])
    .execute();
}

/** Finding the branch diffs a write on main moves (refresh trigger 6) by object, not by branch. */
async function indexBranchChangesByObject(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex('cc_branch_changes_by_object')
    .ifNotExists()
    .on('branch_changes')
    .columns(['object_type', 'object_id'])
    .execute();
}

/** A comment thread may name the attribute of its change it is about (replies carry their root's). */
async function addCommentAttribute(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('cc_change_comments').addColumn('attribute', 'text').execute();
}

/**
 * The event stream (`stream/`): what changed, kept in a bounded window so a client resumes
 * after a disconnect or a restart; `cc_stream_state` remembers how far the window was pruned.
 */
async function createStreamEvents(db: Kysely<unknown>): Promise<void> {
  await keyedTable(db, 'cc_stream_events')
    .addColumn('time', 'text', (c) => c.notNull())
    .addColumn('event', 'text', (c) => c.notNull())
    .addColumn('change_request_id', 'integer', (c) => c.notNull())
    .$call(objectRef())
    .addColumn('subject', 'text')
    .execute();
  await db.schema
    .createIndex('cc_stream_events_request')
    .on('cc_stream_events')
    .columns(['change_request_id', 'id'])
    .execute();
  await db.schema.createIndex('cc_stream_events_time').on('cc_stream_events').column('time').execute();
  await db.schema
    .createTable('cc_stream_state')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('pruned_through', 'integer', (c) => c.notNull())
    .execute();
  await sql`INSERT INTO cc_stream_state (id, pruned_through) VALUES (1, 0)`.execute(db);
}

/**
 * Whether a comment's text was edited (resolving a thread moves last_updated, so last_updated
 * cannot tell). Comments edited before are found in the changelog.
 */
async function addCommentEdited(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('cc_change_comments')
    .addColumn('edited', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  const textChanged =
    databaseKind(db) === 'postgres'
      ? sql`(prechange_data::jsonb -> 'text') IS DISTINCT FROM (postchange_data::jsonb -> 'text')`
      : sql`json_extract(prechange_data, '$.text') IS NOT json_extract(postchange_data, '$.text')`;
  await sql`UPDATE cc_change_comments SET edited = 1 WHERE id IN (
    SELECT changed_object_id FROM object_changes
    WHERE changed_object_type = 'change_control.changecomment' AND action = 'update'
      AND ${textChanged})`.execute(db);
}

/**
 * The accountable override (gate/override.ts): who merged a request the gate refused, when,
 * why, and what the gate said at that moment.
 */
async function addOverride(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('cc_change_requests').addColumn('override_reason', 'text').execute();
  await db.schema
    .alterTable('cc_change_requests')
    .addColumn('override_by_id', 'integer', clearedWith('users'))
    .execute();
  await db.schema.alterTable('cc_change_requests').addColumn('override_time', 'text').execute();
  await db.schema.alterTable('cc_change_requests').addColumn('overridden_reason', 'text').execute();
}

/**
 * Content digests (branching/digest.ts): the digest of the branch's net diff a review was given
 * on, a check result ran on, and the request's branch has now (cached at each refresh of the
 * branch's content); a policy's enforcement and per-check settings (reporter, timeout).
 */
async function addDigestsAndEnforcement(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('cc_reviews').addColumn('digest', 'text').execute();
  await db.schema.alterTable('cc_merge_checks').addColumn('digest', 'text').execute();
  await db.schema.alterTable('cc_change_requests').addColumn('digest', 'text').execute();
  await db.schema
    .alterTable('cc_policies')
    .addColumn('enforcement', 'text', (c) => c.notNull().defaultTo('active'))
    .execute();
  await db.schema
    .alterTable('cc_policies')
    .addColumn('check_settings', 'text', (c) => c.notNull().defaultTo('{}'))
    .execute();
}

/**
 * Freeze calendars (`cc_freezes`), the merge queue's head claim (`cc_merge_queue_claim`, one
 * row: which service instance runs the queue, until when) and the objects a check names
 * (`cc_merge_checks.objects`: the `mergeable` check lists what would conflict or fail to apply).
 */
async function addFreezesQueueClaimAndCheckObjects(db: Kysely<unknown>): Promise<void> {
  await keyedTable(db, 'cc_freezes')
    .addColumn('name', 'text', (c) => c.notNull().unique())
    .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('enabled', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('start_at', 'text')
    .addColumn('end_at', 'text')
    .addColumn('weekdays', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('start_time', 'text')
    .addColumn('end_time', 'text')
    .addColumn('time_zone', 'text', (c) => c.notNull().defaultTo('UTC'))
    .addColumn('policy_id', 'integer', (c) => c.references('cc_policies.id').onDelete('cascade'))
    .$call(stamps())
    .execute();
  await db.schema
    .createTable('cc_merge_queue_claim')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('holder', 'text')
    .addColumn('expires', 'text')
    .execute();
  await sql`INSERT INTO cc_merge_queue_claim (id, holder, expires) VALUES (1, NULL, NULL)`.execute(db);
  await db.schema.createIndex('cc_merge_jobs_state').on('cc_merge_jobs').columns(['state', 'id']).execute();
  await db.schema
    .alterTable('cc_merge_checks')
    .addColumn('objects', 'text', (c) => c.notNull().defaultTo('[]'))
    .execute();
}

/** Journal entries on change requests (they go with their request: ON DELETE CASCADE). */
async function createJournalEntries(db: Kysely<unknown>): Promise<void> {
  await keyedTable(db, 'cc_journal_entries')
    .addColumn('assigned_object_type', 'text', (c) => c.notNull())
    .addColumn('assigned_object_id', 'integer', ownedBy('cc_change_requests'))
    .addColumn('kind', 'text', (c) => c.notNull().defaultTo('info'))
    .addColumn('comments', 'text', (c) => c.notNull())
    .addColumn('created_by_id', 'integer', (c) => c.notNull())
    .$call(stamps())
    .execute();
  await db.schema
    .createIndex('cc_journal_entries_object')
    .on('cc_journal_entries')
    .columns(['assigned_object_id', 'created'])
    .execute();
}

/** NetBox's free-form `custom_fields` (a JSON object, `{}` by default) on the four tagged models. */
async function addCustomFields(db: Kysely<unknown>): Promise<void> {
  for (const table of ['cc_policies', 'cc_policy_rules', 'cc_change_requests', 'cc_reviews']) {
    await db.schema
      .alterTable(table)
      .addColumn('custom_fields', 'text', (c) => c.notNull().defaultTo('{}'))
      .execute();
  }
}

/**
 * Policy matching kept per branch: per branch, policy and object type, the number of the
 * branch's changes of that type the policy's condition set holds for, and the definition each
 * policy's counts were computed with (a policy written elsewhere is recomputed when it differs).
 * The counts start empty and every existing policy's definition is recorded: each branch is
 * counted whole on its first read (its kept state is missing), not every branch at once.
 */
async function addBranchPolicyMatches(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('cc_branch_policy_matches')
    .addColumn('branch_id', 'integer', ownedBy('branches'))
    .addColumn('policy_id', 'integer', ownedBy('cc_policies'))
    .addColumn('object_type', 'text', (c) => c.notNull())
    .addColumn('matches', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('cc_branch_policy_matches_pk', ['branch_id', 'policy_id', 'object_type'])
    .execute();
  await db.schema
    .createIndex('cc_branch_policy_matches_policy')
    .on('cc_branch_policy_matches')
    .columns(['policy_id', 'branch_id'])
    .execute();
  await db.schema
    .createTable('cc_policy_match_definitions')
    .addColumn('policy_id', 'integer', (c) => c.primaryKey().references('cc_policies.id').onDelete('cascade'))
    .addColumn('definition', 'text', (c) => c.notNull())
    .execute();
  // The definition as `policies/matches-repository.ts` computes it.
  await sql`INSERT INTO cc_policy_match_definitions (policy_id, definition)
    SELECT id, object_types || '|' || coalesce(conditions, 'null') || '|' || condition_state FROM cc_policies`.execute(
    db,
  );
}

/** The plugin's migrations, in order. Names are stable keys: never rename one. */
/**
 * The digest of a branch's net diff became a multiset hash of the same canonical lines
 * (branching/digest.ts). A digest recorded under the former algorithm (on a request, a review
 * or a reported check of a branch that still exists) that matches the branch's content now is
 * rewritten to the new digest of that content, so approvals and results given on it still hold;
 * the others stay as they were (they already differ from the content now).
 */
async function rewriteFormerDigests(db: Kysely<unknown>): Promise<void> {
  const q = db as Kysely<any>;
  const branches = await q
    .selectFrom('cc_change_requests')
    .select('branch_id')
    .distinct()
    .where('branch_id', 'is not', null)
    .execute();
  for (const { branch_id: branchId } of branches as Array<{ branch_id: number }>) {
    const changes: Array<{ objectType: string; objectId: number; original: unknown; modified: unknown }> = [];
    let after = 0;
    for (;;) {
      const rows = (await q
        .selectFrom('branch_changes')
        .select(['id', 'object_type', 'object_id', 'original', 'modified'])
        .where('branch_id', '=', branchId)
        .where('id', '>', after)
        .orderBy('id')
        .limit(5000)
        .execute()) as Array<{
        id: number;
        object_type: string;
        object_id: number;
        original: string | null;
        modified: string | null;
      }>;
      if (rows.length === 0) break;
      for (const r of rows) {
        changes.push({
          objectType: r.object_type,
          objectId: r.object_id,
          original: r.original === null ? null : JSON.parse(r.original),
          modified: r.modified === null ? null : JSON.parse(r.modified),
        });
      }
      after = rows[rows.length - 1]!.id;
    }
    const former = formerDigestOfChanges(changes);
    const now = digestOfChanges(changes);
    const requests = q.selectFrom('cc_change_requests').select('id').where('branch_id', '=', branchId);
    await q
      .updateTable('cc_change_requests')
      .set({ digest: now })
      .where('branch_id', '=', branchId)
      .where('digest', '=', former)
      .execute();
    await q
      .updateTable('cc_reviews')
      .set({ digest: now })
      .where('change_request_id', 'in', requests)
      .where('digest', '=', former)
      .execute();
    await q
      .updateTable('cc_merge_checks')
      .set({ digest: now })
      .where('change_request_id', 'in', requests)
      .where('digest', '=', former)
      .execute();
  }
}

/**
 * A request's thread roots by whether they are resolved: counting a request's threads and its
 * open ones (the `threads-resolved` check, at every refresh of the gate) reads this small index
 * instead of every comment row of the request, replies and texts included.
 */
async function indexThreadRoots(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex('cc_comments_thread_roots')
    .on('cc_change_comments')
    .columns(['change_request_id', 'resolved'])
    .where(sql.ref('parent_id'), 'is', null)
    .execute();
}

/**
 * Suggested changes on comments: the proposed value of an attribute (`suggestion`, JSON: the
 * attribute, the value, and the attribute's value in the branch when it was suggested), and who
 * applied it, when.
 */
async function addCommentSuggestions(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('cc_change_comments').addColumn('suggestion', 'text').execute();
  await db.schema
    .alterTable('cc_change_comments')
    .addColumn('applied_by_id', 'integer', clearedWith('users'))
    .execute();
  await db.schema.alterTable('cc_change_comments').addColumn('applied_at', 'text').execute();
}

/**
 * The changelog's entries of reviews, checks, comments and journal entries kept before entries
 * named the object theirs belongs to: each gets its change request (read from the state it
 * recorded) as its related object, so the changelog shows it only to callers who may view that
 * request. An entry whose state names none keeps none (and shows to unrestricted callers only).
 */
async function relateRecordedEntries(db: Kysely<unknown>): Promise<void> {
  const q = db as Kysely<any>;
  const types = [
    'change_control.review',
    'change_control.mergecheck',
    'change_control.changecomment',
    'extras.journalentry',
  ];
  for (let after = 0; ;) {
    const rows: Array<{ id: number; prechange_data: string | null; postchange_data: string | null }> = await q
      .selectFrom('object_changes')
      .select(['id', 'prechange_data', 'postchange_data'])
      .where('changed_object_type', 'in', types)
      .where('id', '>', after)
      .orderBy('id')
      .limit(1000)
      .execute();
    if (rows.length === 0) return;
    after = rows[rows.length - 1]!.id;
    const byRequest = new Map<number, number[]>();
    for (const row of rows) {
      const state = JSON.parse(row.postchange_data ?? row.prechange_data ?? '{}') as Record<string, unknown>;
      const request = state.change_request ?? state.assigned_object_id;
      if (typeof request !== 'number') continue;
      byRequest.set(request, [...(byRequest.get(request) ?? []), row.id]);
    }
    for (const [request, ids] of byRequest)
      await q
        .updateTable('object_changes')
        .set({ related_object_type: 'change_control.changerequest', related_object_id: request })
        .where('id', 'in', ids)
        .execute();
  }
}

/** The conflicts with main a request's merge acknowledged (`merge_acknowledged_conflicts`). */
async function addMergeAcknowledgedConflicts(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('cc_change_requests').addColumn('merge_acknowledged_conflicts', 'text').execute();
}

/**
 * Who reported a check's result (`reported_by`: a result from anyone but the reporter a check
 * declares is outdated) and, for an event rule's report, the rule (`source`).
 */
async function addCheckReporter(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('cc_merge_checks').addColumn('reported_by', 'integer', clearedWith('users')).execute();
  await db.schema.alterTable('cc_merge_checks').addColumn('source', 'text').execute();
}

/**
 * What time changes: each pending check's `deadline` (a required reported check with
 * `timeout_minutes` fails as never reported then) and `timed_out` (it did); the indexes the gate's
 * clock reads its next instant from (the earliest deadline, window start or end); and the gate
 * clock's one row (`cc_gate_clock`: up to which instant the time-driven changes were announced,
 * so that of several instances one announces each).
 */
async function addGateClock(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('cc_merge_checks').addColumn('deadline', 'text').execute();
  await db.schema
    .alterTable('cc_merge_checks')
    .addColumn('timed_out', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .createIndex('cc_merge_checks_deadline')
    .on('cc_merge_checks')
    .columns(['status', 'deadline'])
    .execute();
  await db.schema
    .createIndex('cc_change_requests_window_start')
    .on('cc_change_requests')
    .column('scheduled_start')
    .execute();
  await db.schema
    .createIndex('cc_change_requests_window_end')
    .on('cc_change_requests')
    .column('scheduled_end')
    .execute();
  await db.schema
    .createTable('cc_gate_clock')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('announced_through', 'text')
    .execute();
  await sql`INSERT INTO cc_gate_clock (id, announced_through) VALUES (1, NULL)`.execute(db);
}

/**
 * Who a request's policies on trial (`enforcement: evaluate`) name and no active policy does
 * (`cc_trial_reviewers`): their reviews are advisory, and `waiting` marks those who owe a decision
 * to an unsatisfied rule on trial (their "advisory reviews" list).
 */
async function addTrialReviewers(db: Kysely<unknown>): Promise<void> {
  await pairTable(db, 'cc_trial_reviewers', ['change_request_id', 'cc_change_requests'], ['user_id', 'users'])
    .addColumn('waiting', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .createIndex('cc_trial_reviewers_user')
    .on('cc_trial_reviewers')
    .columns(['user_id', 'waiting', 'change_request_id'])
    .execute();
}

/**
 * Cached at each refresh, as `gates_cleared` is: the required checks whose result does not count
 * because it is outdated or the timeout's (`cc_change_requests.stale_checks`, JSON), so that a
 * list row says so without reading checks.
 */
async function addStaleChecks(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('cc_change_requests')
    .addColumn('stale_checks', 'text', (c) => c.notNull().defaultTo('[]'))
    .execute();
}

export const changeControlMigrations: Record<string, Migration> = {
  '20-change-control-0001-initial': { up: createTables },
  '20-change-control-0002-approved-check-kind-reviewer-queue': { up: addCachedApprovalCheckKindAndReviewerQueue },
  '20-change-control-0003-branch-changes-by-object': { up: indexBranchChangesByObject },
  '20-change-control-0004-comment-attribute': { up: addCommentAttribute },
  '20-change-control-0005-stream-events': { up: createStreamEvents },
  '20-change-control-0006-comment-edited': { up: addCommentEdited },
  '20-change-control-0007-override': { up: addOverride },
  '20-change-control-0020-freezes-queue-claim-check-objects': { up: addFreezesQueueClaimAndCheckObjects },
  '20-change-control-0021-digests-enforcement': { up: addDigestsAndEnforcement },
  '20-change-control-0022-journal-entries': { up: createJournalEntries },
  '20-change-control-0023-custom-fields': { up: addCustomFields },
  '20-change-control-0024-branch-policy-matches': { up: addBranchPolicyMatches },
  '20-change-control-0025-multiset-digests': { up: rewriteFormerDigests },
  '20-change-control-0026-thread-roots': { up: indexThreadRoots },
  '20-change-control-0030-comment-suggestions': { up: addCommentSuggestions },
  '20-change-control-0100-changelog-related-requests': { up: relateRecordedEntries },
  '20-change-control-0101-merge-acknowledged-conflicts': { up: addMergeAcknowledgedConflicts },
  '20-change-control-0102-check-reporter': { up: addCheckReporter },
  '20-change-control-0110-gate-clock': { up: addGateClock },
  '20-change-control-0111-trial-reviewers': { up: addTrialReviewers },
  '20-change-control-0112-stale-checks': { up: addStaleChecks },
};
