// SQL lives in repositories (docs/architecture.md): the import rule (.dependency-cruiser.cjs)
// sees only modules that import kysely, while a query written on `ctx.db` (or a plugin's
// database handle) needs no import. This test reads the service's sources and counts the
// queries each module runs itself: `.selectFrom(`, `.insertInto(`, `.updateTable(`,
// `.deleteFrom(` and sql`…`. Repositories, list declarations and the database layers may; no
// other module does (a route module, a domain module, a background task or a hook calls a
// named function of its concept's repository).
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const ROOT = resolve(__dirname, '../..');

/** Where SQL belongs (the same places as the import rule `sql-only-in-repositories`). */
const SQL_HOMES = [
  /^server\/host\/db\//,
  /^server\/plugins\/[^/]+\/db\//,
  /(^|\/|-)repository\.ts$/,
  /\/repositories\//,
  /(^|\/)list\.ts$/,
];

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
  const counts = new Map(
    serverModules()
      .filter((p) => !SQL_HOMES.some((home) => home.test(p)))
      .map((p) => [p, queriesIn(readFileSync(join(ROOT, p), 'utf8'))]),
  );

  it('counts queries written on a database handle (the check can fail)', () => {
    assert.equal(queriesIn("const row = await ctx.db\n  .selectFrom('users')\n  .selectAll();"), 1);
    assert.equal(queriesIn('await sql`select 1`.execute(db); await sql<{ n: number }>`select 2`.execute(db);'), 2);
    assert.equal(queriesIn("// ctx.db.deleteFrom('users') is a comment"), 0);
    assert.ok(counts.size > 50, `read only ${counts.size} modules`);
  });

  it('finds no query outside repositories, list declarations and the database layers', () => {
    const offending = [...counts].filter(([, n]) => n > 0).map(([p, n]) => `${p}: ${n}`);
    assert.deepEqual(
      offending,
      [],
      'move these queries into the repository of their concept as named, typed functions',
    );
  });
});
