// Where a check report's time goes on PostgreSQL: the built service (dist/server.js) on one
// database, 16 connections reporting, and beside the load
//   - the service's CPU per report (every thread of the process, from /proc/PID/task/*/schedstat),
//   - the database's CPU per report (every process of the cluster: backends, WAL writer),
//   - the WAL flushes per report and their mean time (pg_stat_wal; timed when the cluster has
//     track_wal_io_timing on),
//   - how often the write lock was held, and how many transactions waited for it (pg_locks,
//     sampled every few milliseconds on a connection of its own).
//   BENCH_DATABASE_URL=postgres://USER@HOST:PORT/DATABASE npx tsx bench/report-profile.ts
// (after `node esbuild.config.mjs server`; BENCH_DURATION seconds, 5 by default). To compare
// builds under the same load, BENCH_SERVERS=dist/a.js,dist/b.js (copies of dist/server.js) runs
// each in turn, BENCH_ROUNDS times (1 by default).
import autocannon from 'autocannon';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { Api } from './api';
import { reportRequests } from './report-requests';
import { seedReportScenario } from './seed';
import { REPO, startProcess } from './service';
import { SERVICE_ENVIRONMENT, SERVICE_NODE_OPTIONS } from '../launch/service-launch';

const DURATION = Number(process.env.BENCH_DURATION ?? 5);
const TOKEN = 'bench0000000000000000000000000000000000';
const PG_URL = process.env.BENCH_DATABASE_URL ?? '';

/** Nanoseconds on a CPU, summed over every thread of `pid`. */
function threadsCpu(pid: number): number {
  let ns = 0;
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    try {
      ns += Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, 'utf8').split(' ')[0]);
    } catch {
      // A thread that ended meanwhile.
    }
  }
  return ns;
}

/** The processes of the cluster whose postmaster is `postmaster` (itself included). */
function clusterPids(postmaster: number): number[] {
  const pids = [postmaster];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === postmaster) pids.push(Number(entry));
    } catch {
      // Gone.
    }
  }
  return pids;
}

function clusterCpu(postmaster: number): number {
  let ns = 0;
  for (const pid of clusterPids(postmaster)) {
    try {
      ns += threadsCpu(pid);
    } catch {
      // Gone.
    }
  }
  return ns;
}

async function main(): Promise<void> {
  if (!PG_URL) throw new Error('BENCH_DATABASE_URL is required');
  const servers = (process.env.BENCH_SERVERS ?? 'dist/server.js').split(',');
  const rounds = Number(process.env.BENCH_ROUNDS ?? 1);
  for (let round = 0; round < rounds; round++) {
    for (const server of servers) {
      console.log(`${server}, round ${round + 1}:`);
      await profile(server);
    }
  }
}

async function profile(server: string): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'cc-report-profile-'));
  const config = join(dir, 'config.json');
  writeFileSync(
    config,
    JSON.stringify({
      change_control: { required_external_checks: [['ci/build', 'CI build'], 'ci/lint'], enable_auto_merge: false },
    }),
  );
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  const postmaster = Number(
    (await admin.query<{ pid: number }>(`select pid from pg_stat_activity where backend_type = 'walwriter'`)).rows[0]
      ?.pid ?? 0,
  );
  // The cluster's processes are measured only when it runs on this machine.
  let parent = 0;
  try {
    if (postmaster) parent = Number(readFileSync(`/proc/${postmaster}/stat`, 'utf8').split(') ')[1]!.split(' ')[1]);
  } catch {
    parent = 0;
  }
  await admin.query('drop schema if exists profile_1 cascade; create schema profile_1');
  const url = new URL(PG_URL);
  url.searchParams.set('options', '-c search_path=profile_1');
  const service = await startProcess(
    join(REPO, server),
    ['--port', '0', '--db', url.toString(), '--config', config],
    { ...SERVICE_ENVIRONMENT, CHANGE_CONTROL_ADMIN_TOKEN: TOKEN },
    SERVICE_NODE_OPTIONS,
  );
  try {
    const timed =
      (await admin.query<{ track_wal_io_timing: string }>('show track_wal_io_timing')).rows[0]!.track_wal_io_timing ===
      'on';
    const api = new Api(service.url, TOKEN);
    const checks = await seedReportScenario(api);
    const requests = reportRequests(checks);
    const options = (duration: number): autocannon.Options => ({
      url: service.url,
      connections: 16,
      duration,
      headers: { Authorization: `Token ${TOKEN}` },
      requests,
    });
    await autocannon(options(2));
    await admin.query('select pg_stat_reset_shared($1)', ['wal']);
    const serviceBefore = threadsCpu(service.child.pid!);
    const clusterBefore = parent ? clusterCpu(parent) : 0;
    let samples = 0;
    let held = 0;
    let waiting = 0;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const { rows } = await admin.query<{ held: number; waiting: number }>(
          `select count(*) filter (where granted)::int as held, count(*) filter (where not granted)::int as waiting from pg_locks where locktype = 'advisory' and objid = 1`,
        );
        samples++;
        held += rows[0]!.held;
        waiting += rows[0]!.waiting;
        await new Promise((r) => setTimeout(r, 5));
      }
    })();
    const result = await autocannon(options(DURATION));
    sampling = false;
    await sampler;
    const serviceNs = threadsCpu(service.child.pid!) - serviceBefore;
    const clusterNs = parent ? clusterCpu(parent) - clusterBefore : 0;
    const wal = (
      await admin.query<{ wal_sync: string; wal_sync_time: number }>('select wal_sync, wal_sync_time from pg_stat_wal')
    ).rows[0]!;
    const reports = result.requests.sent;
    const perReport = (ns: number) => `${(ns / reports / 1e6).toFixed(3)} ms`;
    console.log(
      `  reports: ${reports} in ${DURATION} s, ${result.requests.average.toFixed(0)} req/s, p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms, non-2xx ${result.non2xx}`,
    );
    console.log(
      `  service CPU per report: ${perReport(serviceNs)} (${((serviceNs / 1e9 / DURATION) * 100).toFixed(0)} % of a core)`,
    );
    if (parent)
      console.log(
        `  database CPU per report: ${perReport(clusterNs)} (${((clusterNs / 1e9 / DURATION) * 100).toFixed(0)} % of a core)`,
      );
    const mean = timed
      ? `${(wal.wal_sync_time / Math.max(1, Number(wal.wal_sync))).toFixed(3)} ms`
      : 'not timed (track_wal_io_timing is off)';
    console.log(`  WAL flushes per report: ${(Number(wal.wal_sync) / reports).toFixed(2)}, mean ${mean}`);
    console.log(
      `  write lock held in ${((held / samples) * 100).toFixed(0)} % of ${samples} samples; transactions waiting for it: ${(waiting / samples).toFixed(1)} on average`,
    );
  } finally {
    await service.stop();
    await admin.query('drop schema if exists profile_1 cascade');
    await admin.end();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
