// SQL lives in repositories (docs/architecture.md): the import rule (.dependency-cruiser.cjs)
// sees only modules that import kysely, while a query written on `ctx.db` (or a plugin's
// database handle) needs no import. This test reads the service's sources and counts the
// queries each module runs itself: `.selectFrom(`, `.insertInto(`, `.updateTable(`,
// `.deleteFrom(` and sql`…`. Repositories, list declarations and the database layers may;
// route modules may not; the other modules named below still do and may not do more.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const ROOT = resolve(__dirname, '../..');

/** Where SQL belongs (the same places as the import rule `sql-only-in-repositories`). */
const SQL_HOMES = [/^server\/host\/db\//, /^server\/plugins\/[^/]+\/db\//, /(^|\/|-)repository\.ts$/, /\/repositories\//, /(^|\/)list\.ts$/];

/** Route modules: validate, call the domain, present; never a query. */
const ROUTE_MODULE = /(^|\/|-)routes\.ts$/;

/**
 * Modules that still run queries of their own, with at most how many. A count may only go down
 * (lower it here when a query moves to a repository); a module not named here runs none.
 */
const KNOWN_QUERIES: Record<string, number> = {
  'server/host/users/bootstrap.ts': 7,
  'server/host/users/object-permissions.ts': 1,
  'server/plugins/branching/branches.ts': 5,
  'server/plugins/branching/changes.ts': 2,
};

const QUERY = /\.(selectFrom|insertInto|updateTable|deleteFrom)\(|\bsql(<[^`;]*>)?`/g;

function queriesIn(source: string): number {
  const code = source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
  return code.match(QUERY)?.length ?? 0;
}

function serverModules(): string[] {
  return (readdirSync(join(ROOT, 'server'), { recursive: true }) as string[])
    .map((p) => `server/${p.split('\\').join('/')}`)
    .filter((p) => p.endsWith('.ts'))
    .sort();
}

describe('architecture: SQL only in repositories', () => {
  const counts = new Map(serverModules().filter((p) => !SQL_HOMES.some((home) => home.test(p))).map((p) => [p, queriesIn(readFileSync(join(ROOT, p), 'utf8'))]));

  it('counts queries written on a database handle (the check can fail)', () => {
    assert.equal(queriesIn("const row = await ctx.db\n  .selectFrom('users')\n  .selectAll();"), 1);
    assert.equal(queriesIn('await sql`select 1`.execute(db); await sql<{ n: number }>`select 2`.execute(db);'), 2);
    assert.equal(queriesIn('// ctx.db.deleteFrom(\'users\') is a comment'), 0);
    assert.ok(counts.size > 50, `read only ${counts.size} modules`);
  });

  it('finds no query in a route module', () => {
    const offending = [...counts].filter(([p, n]) => ROUTE_MODULE.test(p) && n > 0).map(([p, n]) => `${p}: ${n}`);
    assert.deepEqual(offending, [], 'route modules ask repositories (or the domain); move these queries into the repository of their concept');
  });

  it('finds no more queries in other modules than the known ones, and names no route module among them', () => {
    assert.deepEqual(Object.keys(KNOWN_QUERIES).filter((p) => ROUTE_MODULE.test(p)), []);
    const grown = [...counts]
      .filter(([p, n]) => n > (KNOWN_QUERIES[p] ?? 0))
      .map(([p, n]) => `${p}: ${n} (known: ${KNOWN_QUERIES[p] ?? 0})`);
    assert.deepEqual(grown, [], 'a new query belongs in a repository (and where one moved there, lower the count in KNOWN_QUERIES)');
    const gone = Object.keys(KNOWN_QUERIES).filter((p) => !counts.has(p));
    assert.deepEqual(gone, [], 'modules named in KNOWN_QUERIES that no longer exist');
  });
});
