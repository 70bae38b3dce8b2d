// The two SQLite drivers behind the database layer: better-sqlite3 (`npm start`) and Node's own
// `node:sqlite` (the extension's service, on the editor's runtime). The suite runs on either:
// on Node 20 better-sqlite3, on Node 24 with CHANGE_CONTROL_SQLITE_DRIVER=node `node:sqlite`
// (.ci/run runs both). What the service relies on holds on the driver this process uses.
import assert from 'node:assert/strict';
import { constraintViolation } from '../../../../server/host/db/constraint-errors';
import { betterSqlite3 } from '../../../../server/host/db/sqlite-better-sqlite3';
import type { SqliteConnection } from '../../../../server/host/db/sqlite-driver';
import { chooseSqliteDriver, processSqliteDriver } from '../../../../server/host/db/sqlite-driver-choice';
import { nodeSqlite } from '../../../../server/host/db/sqlite-node';
import { tempDirForEachTest } from '../../../support/prepared';

const nodeProblem = nodeSqlite.problem();
const nativeProblem = betterSqlite3.problem();

describe('SQLite drivers: better-sqlite3 and node:sqlite', () => {
  it('picks the driver CHANGE_CONTROL_SQLITE_DRIVER names, else better-sqlite3 when it loads, else node:sqlite; says why; refuses an unknown name', () => {
    if (nodeProblem === null) {
      assert.deepEqual(chooseSqliteDriver('node'), {
        driver: nodeSqlite,
        reason: 'CHANGE_CONTROL_SQLITE_DRIVER=node',
      });
      assert.equal(chooseSqliteDriver('node:sqlite').driver, nodeSqlite);
    } else {
      assert.throws(
        () => chooseSqliteDriver('node'),
        new RegExp(
          `^Error: no SQLite driver: CHANGE_CONTROL_SQLITE_DRIVER=node, but this Node\\.js \\(${process.versions.node.replace(/\./g, '\\.')}\\) has no node:sqlite: Node\\.js 22\\.16 or newer has it$`,
        ),
      );
    }
    if (nativeProblem === null) {
      assert.deepEqual(chooseSqliteDriver(undefined), { driver: betterSqlite3, reason: 'it loads' });
      assert.equal(chooseSqliteDriver('better-sqlite3').driver, betterSqlite3);
    } else {
      assert.throws(
        () => chooseSqliteDriver('better-sqlite3'),
        /^Error: no SQLite driver: .*better-sqlite3 cannot be loaded/,
      );
      if (nodeProblem === null) {
        const auto = chooseSqliteDriver('auto');
        assert.equal(auto.driver, nodeSqlite);
        assert.match(auto.reason, /^better-sqlite3 cannot be loaded: /);
      }
    }
    assert.throws(
      () => chooseSqliteDriver('sqlite9'),
      /CHANGE_CONTROL_SQLITE_DRIVER=sqlite9: expected better-sqlite3, node or auto/,
    );
  });

  describe(`on this process's driver`, () => {
    const dir = tempDirForEachTest('cc-sqlite-driver-');
    let connections: SqliteConnection[] = [];
    afterEach(() => {
      for (const c of connections) if (c.open) c.close();
      connections = [];
    });
    const open = (path: string, readonly = false): SqliteConnection => {
      const connection = processSqliteDriver().driver.open(path, { readonly });
      connections.push(connection);
      return connection;
    };

    it('answers rows as plain objects (the last of a repeated column name wins), says which statements answer rows, and counts a write with its row id', () => {
      const db = open(':memory:');
      const create = db.prepare('create table t (id integer primary key, v text unique, n integer)');
      assert.equal(create.reader, false);
      create.run([]);
      const insert = db.prepare('insert into t (v, n) values (?, ?)');
      assert.equal(insert.reader, false);
      assert.deepEqual(insert.run(['a', 1]), { changes: 1, lastInsertRowid: 1 });
      const returning = db.prepare('insert into t (v, n) values (?, ?) returning id, v');
      assert.equal(returning.reader, true);
      assert.deepEqual(returning.all(['b', 2]), [{ id: 2, v: 'b' }]);
      const rows = db.prepare('select id, v, n, n as v from t order by id').all([]);
      assert.deepEqual(rows, [
        { id: 1, v: 1, n: 1 },
        { id: 2, v: 2, n: 2 },
      ]);
      for (const row of rows) assert.equal(Object.getPrototypeOf(row), Object.prototype);
      assert.deepEqual(db.prepare('select v from t where id = ?').get([2]), { v: 'b' });
      assert.equal(db.prepare('select v from t where id = ?').get([9]), undefined);
      assert.deepEqual([...db.prepare('select id from t order by id').iterate([])], [{ id: 1 }, { id: 2 }]);
      assert.deepEqual(db.prepare('update t set n = n + 1').run([]), { changes: 2, lastInsertRowid: 2 });
      assert.deepEqual(db.pragma('foreign_keys'), [{ foreign_keys: 1 }]);
    });

    it('binds numbers, strings, bigints, buffers and null, undefined as null, and refuses booleans, dates and objects with the same TypeError', () => {
      const db = open(':memory:');
      db.prepare('create table t (id integer primary key, x)').run([]);
      const insert = db.prepare('insert into t (x) values (?)');
      for (const value of [1.5, 'text', 2n ** 62n, Buffer.from('b'), null, undefined]) insert.run([value]);
      const stored = db.prepare('select typeof(x) as type from t order by id').all([]) as Array<{ type: string }>;
      assert.deepEqual(
        stored.map((r) => r.type),
        ['real', 'text', 'integer', 'blob', 'null', 'null'],
      );
      assert.deepEqual(db.prepare('select count(*) as n from t where x = ?').get([2n ** 62n]), { n: 1 });
      for (const value of [true, new Date(0), { a: 1 }]) {
        assert.throws(() => insert.run([value]), {
          name: 'TypeError',
          message: 'SQLite3 can only bind numbers, strings, bigints, buffers, and null',
        });
      }
    });

    it('reports a unique value taken and a missing referenced row in the words the constraint errors read', () => {
      const db = open(':memory:');
      db.pragma('foreign_keys = ON');
      db.prepare('create table p (id integer primary key, name text unique)').run([]);
      db.prepare('create table c (id integer primary key, p integer references p (id))').run([]);
      db.prepare('insert into p (name) values (?)').run(['one']);
      const unique = (() => {
        try {
          db.prepare('insert into p (name) values (?)').run(['one']);
        } catch (err) {
          return err;
        }
      })();
      assert.deepEqual(constraintViolation(unique), { kind: 'unique', column: 'name' });
      const foreign = (() => {
        try {
          db.prepare('insert into c (p) values (?)').run([7]);
        } catch (err) {
          return err;
        }
      })();
      assert.deepEqual(constraintViolation(foreign), { kind: 'foreign-key' });
    });

    it('opens a file read-only: its reads see what the writer committed, and it can write nothing', () => {
      const file = dir('f.sqlite3');
      const writer = open(file);
      writer.pragma('journal_mode = WAL');
      writer.prepare('create table t (id integer primary key, v text)').run([]);
      writer.prepare('insert into t (v) values (?)').run(['a']);
      const reader = open(file, true);
      const read = reader.prepare('select count(*) as n from t');
      assert.equal(read.readonly, true);
      assert.deepEqual(read.get([]), { n: 1 });
      writer.prepare('insert into t (v) values (?)').run(['b']);
      assert.deepEqual(read.get([]), { n: 2 });
      assert.throws(() => reader.prepare('insert into t (v) values (?)').run(['c']), /readonly|read-only/i);
      assert.deepEqual(writer.prepare('select count(*) as n from t').get([]), { n: 2 });
      reader.close();
      assert.equal(reader.open, false);
    });
  });
});
