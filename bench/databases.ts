// SQLite and PostgreSQL side by side, and several instances on one PostgreSQL database: the
// built service (dist/server.js) driven over HTTP with concurrent connections (autocannon).
//   npm run bench:databases   (BENCH_DATABASE_URL=postgres://USER@HOST:PORT/DATABASE, a database
//                              the user may create schemas in; BENCH_DURATION seconds per scenario;
//                              BENCH_MORE_INSTANCES=none to measure one instance only, 2,3 by default)
// Without BENCH_DATABASE_URL it says so and measures SQLite only. With it, one instance on each
// database is measured in turns (SQLite, PostgreSQL, PostgreSQL, SQLite; half the duration each),
// so that both figures of a ratio come from the same seconds of the machine.
import autocannon from 'autocannon';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { Api, CC } from './api';
import { seedDetailScenario, seedReportScenario } from './seed';
import { reportRequests } from './report-requests';
import { startService, type RunningService } from './service';

const DURATION = Number(process.env.BENCH_DURATION ?? 10);
const TOKEN = 'bench0000000000000000000000000000000000';
const PG_URL = process.env.BENCH_DATABASE_URL ?? '';
/** The instance counts measured beside one (BENCH_MORE_INSTANCES=none measures one instance only). */
const MORE_INSTANCES = (process.env.BENCH_MORE_INSTANCES ?? '2,3')
  .split(',')
  .map(Number)
  .filter((n) => n > 1);
const log = (m: string) => process.stderr.write(`[bench] ${m}\n`);

interface Figures {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
}

/** Load against one or several instances at once (the same connections split between them); figures summed / worst. */
async function load(urls: string[], options: Partial<autocannon.Options> = {}, duration = DURATION): Promise<Figures> {
  const results = await Promise.all(
    urls.map((url) =>
      autocannon({
        url,
        connections: Math.max(1, Math.round(16 / urls.length)),
        duration,
        headers: { Authorization: `Token ${TOKEN}` },
        ...options,
      }),
    ),
  );
  return {
    rps: results.reduce((sum, r) => sum + r.requests.average, 0),
    p50: Math.max(...results.map((r) => r.latency.p50)),
    p99: Math.max(...results.map((r) => r.latency.p99)),
    errors: results.reduce((sum, r) => sum + r.non2xx + r.errors, 0),
  };
}

interface Measured {
  detail: Figures;
  report: Figures;
}

/** Seeds scenarios 1 and 3 of `npm run bench` through the API on `instances` (the first seeds): what to load for each. */
async function seed(
  instances: RunningService[],
): Promise<{ detailUrls: string[]; reportUrls: string[]; report: Partial<autocannon.Options> }> {
  const admin = new Api(instances[0]!.url, TOKEN);
  const { crId } = await seedDetailScenario(admin);
  const checks = await seedReportScenario(admin);
  const urls = instances.map((i) => i.url);
  return {
    detailUrls: urls.map((u) => `${u}${CC}change-requests/${crId}/`),
    reportUrls: urls,
    report: { requests: reportRequests(checks) },
  };
}

/** Seeds scenarios 1 and 3 and measures them on `instances`, from a settled disk. */
async function measure(instances: RunningService[]): Promise<Measured> {
  const { detailUrls, reportUrls, report } = await seed(instances);
  settleDisk();
  await load(detailUrls, {}, 2);
  const detail = await load(detailUrls);
  await load(reportUrls, report, 2);
  return { detail, report: await load(reportUrls, report) };
}

/** Figures of several rounds of one load: requests/s averaged over the rounds (they are as long), the worst p50 and p99. */
function combined(rounds: Figures[]): Figures {
  return {
    rps: rounds.reduce((sum, r) => sum + r.rps, 0) / rounds.length,
    p50: Math.max(...rounds.map((r) => r.p50)),
    p99: Math.max(...rounds.map((r) => r.p99)),
    errors: rounds.reduce((sum, r) => sum + r.errors, 0),
  };
}

/**
 * Scenarios 1 and 3 on SQLite and on PostgreSQL (one instance each, both running), measured in
 * turns: each scenario in rounds of half the duration, in the order SQLite, PostgreSQL,
 * PostgreSQL, SQLite. Both databases so see the machine as it was during the same seconds, and a
 * machine whose speed drifts (other work on it, its disk) moves both figures, not their ratio.
 */
async function measureSideBySide(
  sqlite: RunningService,
  postgres: RunningService,
): Promise<{ sqlite: Measured; postgres: Measured }> {
  const seeded = { sqlite: await seed([sqlite]), postgres: await seed([postgres]) };
  settleDisk();
  const half = Math.max(1, DURATION / 2);
  const rounds = {
    sqlite: { detail: [] as Figures[], report: [] as Figures[] },
    postgres: { detail: [] as Figures[], report: [] as Figures[] },
  };
  for (const scenario of ['detail', 'report'] as const) {
    const run = (db: 'sqlite' | 'postgres', duration: number) =>
      scenario === 'detail'
        ? load(seeded[db].detailUrls, {}, duration)
        : load(seeded[db].reportUrls, seeded[db].report, duration);
    await run('sqlite', 2);
    await run('postgres', 2);
    for (const db of ['sqlite', 'postgres', 'postgres', 'sqlite'] as const)
      rounds[db][scenario].push(await run(db, half));
  }
  return {
    sqlite: { detail: combined(rounds.sqlite.detail), report: combined(rounds.sqlite.report) },
    postgres: { detail: combined(rounds.postgres.detail), report: combined(rounds.postgres.report) },
  };
}

/**
 * Writes out what the kernel still holds for the disk (the seeds, the run before this one) so that
 * each database's scenarios start on a settled disk: a commit's flush otherwise waits behind
 * another run's writeback, and the figures would say more about the order of the runs than about
 * the database.
 */
function settleDisk(): void {
  execFileSync('sync');
}

async function withInstances<T>(
  count: number,
  db: string,
  config: string,
  work: (instances: RunningService[]) => Promise<T>,
): Promise<T> {
  const instances: RunningService[] = [];
  try {
    for (let i = 0; i < count; i++) instances.push(await startService(db, config, TOKEN));
    return await work(instances);
  } finally {
    for (const i of instances) await i.stop();
  }
}

async function pgSchema(admin: pg.Client, name: string): Promise<string> {
  await admin.query(`drop schema if exists ${name} cascade; create schema ${name}`);
  const url = new URL(PG_URL);
  url.searchParams.set('options', `-c search_path=${name}`);
  return url.toString();
}

const fmt = (n: number, digits = 1) => n.toFixed(digits).padStart(9);
const line = (label: string, f: Figures) =>
  `${label.padEnd(58)}${fmt(f.rps, 0)}${fmt(f.p50)}${fmt(f.p99)}${f.errors ? `  (${f.errors} errors)` : ''}`;

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'cc-bench-db-'));
  const config = join(dir, 'config.json');
  writeFileSync(
    config,
    JSON.stringify({
      change_control: { required_external_checks: [['ci/build', 'CI build'], 'ci/lint'], enable_auto_merge: false },
    }),
  );
  const out: string[] = [];
  let admin: pg.Client | null = null;
  try {
    if (!PG_URL) {
      log('SQLite: one instance');
      const sqlite = await withInstances(1, join(dir, 'bench.sqlite3'), config, measure);
      log('BENCH_DATABASE_URL is not set: PostgreSQL is not measured');
      out.push(line('1. detail read, SQLite', sqlite.detail), line('3. check report, SQLite', sqlite.report));
    } else {
      admin = new pg.Client({ connectionString: PG_URL });
      await admin.connect();
      log('SQLite and PostgreSQL: one instance each, measured in turns');
      const pgUrl = await pgSchema(admin, 'bench_1');
      const { sqlite, postgres: one } = await withInstances(1, join(dir, 'bench.sqlite3'), config, ([onSqlite]) =>
        withInstances(1, pgUrl, config, ([onPostgres]) => measureSideBySide(onSqlite!, onPostgres!)),
      );
      out.push(
        line('1. detail read, SQLite', sqlite.detail),
        line('1. detail read, PostgreSQL', one.detail),
        `${''.padEnd(58)}PostgreSQL/SQLite: ${(sqlite.detail.rps / one.detail.rps).toFixed(2)}x slower (target: within 2x)`,
        line('3. check report, SQLite', sqlite.report),
        line('3. check report, PostgreSQL', one.report),
        `${''.padEnd(58)}PostgreSQL/SQLite: ${(sqlite.report.rps / one.report.rps).toFixed(2)}x slower (target: within 3x)`,
      );
      for (const count of MORE_INSTANCES) {
        log(`PostgreSQL: ${count} instances on one database`);
        const many = await withInstances(count, await pgSchema(admin, `bench_${count}`), config, measure);
        out.push(
          line(`1. detail read, PostgreSQL, ${count} instances`, many.detail),
          line(`3. check report, PostgreSQL, ${count} instances`, many.report),
        );
      }
      for (const count of [1, 2, 3]) await admin.query(`drop schema if exists bench_${count} cascade`);
    }
    console.log(
      `\n${'scenario (16 connections in all, split between instances)'.padEnd(58)}${'req/s'.padStart(9)}${'p50 ms'.padStart(9)}${'p99 ms'.padStart(9)}`,
    );
    for (const l of out) console.log(l);
  } finally {
    await admin?.end();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
