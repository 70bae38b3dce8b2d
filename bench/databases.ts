// SQLite and PostgreSQL side by side, and several instances on one PostgreSQL database: the
// built service (dist/server.js) driven over HTTP with concurrent connections (autocannon).
//   npm run bench:databases   (BENCH_DATABASE_URL=postgres://USER@HOST:PORT/DATABASE, a database
//                              the user may create schemas in; BENCH_DURATION seconds per scenario;
//                              BENCH_MORE_INSTANCES=none to measure one instance only, 2,3 by default)
// Without BENCH_DATABASE_URL it says so and measures SQLite only.
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
const MORE_INSTANCES = (process.env.BENCH_MORE_INSTANCES ?? '2,3').split(',').map(Number).filter((n) => n > 1);
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
    urls.map((url) => autocannon({ url, connections: Math.max(1, Math.round(16 / urls.length)), duration, headers: { Authorization: `Token ${TOKEN}` }, ...options })),
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

/** Seeds scenarios 1 and 3 of `npm run bench` through the API and measures them on `instances` (the first seeds), from a settled disk. */
async function measure(instances: RunningService[]): Promise<Measured> {
  const admin = new Api(instances[0]!.url, TOKEN);
  const { crId } = await seedDetailScenario(admin);
  const checks = await seedReportScenario(admin);
  settleDisk();
  const urls = instances.map((i) => i.url);
  const detailUrls = urls.map((u) => `${u}${CC}change-requests/${crId}/`);
  await load(detailUrls, {}, 2);
  const detail = await load(detailUrls);
  await load(urls, { requests: reportRequests(checks) }, 2);
  const report = await load(urls, { requests: reportRequests(checks) });
  return { detail, report };
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

async function withInstances<T>(count: number, db: string, config: string, work: (instances: RunningService[]) => Promise<T>): Promise<T> {
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
const line = (label: string, f: Figures) => `${label.padEnd(58)}${fmt(f.rps, 0)}${fmt(f.p50)}${fmt(f.p99)}${f.errors ? `  (${f.errors} errors)` : ''}`;

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'cc-bench-db-'));
  const config = join(dir, 'config.json');
  writeFileSync(config, JSON.stringify({ change_control: { required_external_checks: [['ci/build', 'CI build'], 'ci/lint'], enable_auto_merge: false } }));
  const out: string[] = [];
  let admin: pg.Client | null = null;
  try {
    log('SQLite: one instance');
    const sqlite = await withInstances(1, join(dir, 'bench.sqlite3'), config, measure);
    if (!PG_URL) {
      log('BENCH_DATABASE_URL is not set: PostgreSQL is not measured');
      out.push(line('1. detail read, SQLite', sqlite.detail), line('3. check report, SQLite', sqlite.report));
    } else {
      admin = new pg.Client({ connectionString: PG_URL });
      await admin.connect();
      log('PostgreSQL: one instance');
      const one = await withInstances(1, await pgSchema(admin, 'bench_1'), config, measure);
      out.push(
        line('1. detail read, SQLite', sqlite.detail),
        line('1. detail read, PostgreSQL', one.detail),
        `${''.padEnd(58)}PostgreSQL/SQLite: ${(sqlite.detail.rps / one.detail.rps).toFixed(2)}x slower (target: within 2x)`,
        line('3. check report, SQLite', sqlite.report),
        line('3. check report, PostgreSQL', one.report),
        `${''.padEnd(58)}PostgreSQL/SQLite: ${(sqlite.report.rps / one.report.rps).toFixed(2)}x slower (target: within 2x)`,
      );
      for (const count of MORE_INSTANCES) {
        log(`PostgreSQL: ${count} instances on one database`);
        const many = await withInstances(count, await pgSchema(admin, `bench_${count}`), config, measure);
        out.push(line(`1. detail read, PostgreSQL, ${count} instances`, many.detail), line(`3. check report, PostgreSQL, ${count} instances`, many.report));
      }
      for (const count of [1, 2, 3]) await admin.query(`drop schema if exists bench_${count} cascade`);
    }
    console.log(`\n${'scenario (16 connections in all, split between instances)'.padEnd(58)}${'req/s'.padStart(9)}${'p50 ms'.padStart(9)}${'p99 ms'.padStart(9)}`);
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
