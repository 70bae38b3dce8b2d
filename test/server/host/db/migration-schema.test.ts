import assert from 'node:assert/strict';
import type { Kysely } from 'kysely';
import { clearedWith, keyedTable, ownedBy, stamps } from '../../../../server/host/db/migrations/schema';
import { nowText } from '../../../../server/host/db/portable';
import { domainForSuite } from '../../../support/domain';

// The migrations' schema helpers must build exactly the SQL they stand for: a migration already
// applied keeps its schema only if the helpers never change what it says.
describe('migrations: the schema helpers build the SQL they stand for', () => {
  const d = domainForSuite();
  // Only the schema builder is used: the domain's database compiles the DDL in its own dialect.
  const schemaOf = (): Kysely<any> => d.ctx().db;

  it('a keyed table with its stamps, given at each insert or defaulting to now', () => {
    const db = schemaOf();
    const now = nowText(db);
    const helped = keyedTable(db, 't')
      .addColumn('name', 'text', (c) => c.notNull())
      .$call(stamps())
      .compile().sql;
    const longhand = db.schema
      .createTable('t')
      .addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('created', 'text', (c) => c.notNull())
      .addColumn('last_updated', 'text', (c) => c.notNull())
      .compile().sql;
    assert.equal(helped, longhand);
    const defaulted = keyedTable(db, 't').$call(stamps(now)).compile();
    const defaultedLonghand = db.schema
      .createTable('t')
      .addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
      .addColumn('created', 'text', (c) => c.notNull().defaultTo(now))
      .addColumn('last_updated', 'text', (c) => c.notNull().defaultTo(now))
      .compile();
    assert.equal(defaulted.sql, defaultedLonghand.sql);
  });

  it('foreign keys deleted with their row, or cleared', () => {
    const db = schemaOf();
    const helped = db.schema
      .createTable('c')
      .addColumn('owner_id', 'integer', ownedBy('owners'))
      .addColumn('ref_id', 'integer', clearedWith('refs'))
      .compile().sql;
    const longhand = db.schema
      .createTable('c')
      .addColumn('owner_id', 'integer', (c) => c.notNull().references('owners.id').onDelete('cascade'))
      .addColumn('ref_id', 'integer', (c) => c.references('refs.id').onDelete('set null'))
      .compile().sql;
    assert.equal(helped, longhand);
  });
});
