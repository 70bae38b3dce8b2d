// Builds of the service compared on the check report on PostgreSQL, interleaved: each build runs
// as its own instance on its own schema of one database, seeded alike, and the load moves from
// one to the next in short slices (the order reversed every other slice), so that every build
// meets the same moments of a busy machine (others' suites, the disk's flushes). Sequential runs
// of several seconds each drift with the machine by more than the builds differ by.
//   BENCH_SERVERS=dist/a.js,dist/b.js BENCH_DATABASE_URL=postgres://USER@HOST:PORT/DATABASE \
//     npx tsx bench/report-interleaved.ts
// (copies of dist/server.js built with `node esbuild.config.mjs server`; BENCH_SLICES slices of
// BENCH_SLICE seconds per build, 12 of 2 by default; 16 connections). Prints each build's reports
// per second over all its slices, then slice by slice.
import autocannon from 'autocannon';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { Api } from './api';
import { reportRequests } from './report-requests';
import { seedReportScenario } from './seed';
import { REPO, startProcess, type RunningService } from './service';
import { SERVICE_ENVIRONMENT, SERVICE_NODE_OPTIONS } from '../launch/service-launch';

const TOKEN = 'bench0000000000000000000000000000000000';
const PG_URL = process.env.BENCH_DATABASE_URL ?? '';
const SLICES = Number(process.env.BENCH_SLICES ?? 12);
const SLICE = Number(process.env.BENCH_SLICE ?? 2);

interface Build {
  server: string;
  schema: string;
  service: RunningService;
  requests: autocannon.Request[];
  perSlice: number[];
}

async function main(): Promise<void> {
  if (!PG_URL) throw new Error('BENCH_DATABASE_URL is required');
  const servers = (process.env.BENCH_SERVERS ?? '').split(',').filter(Boolean);
  if (servers.length < 2) throw new Error('BENCH_SERVERS names two builds or more');
  const dir = mkdtempSync(join(tmpdir(), 'cc-report-interleaved-'));
  const config = join(dir, 'config.json');
  writeFileSync(
    config,
    JSON.stringify({
      change_control: { required_external_checks: [['ci/build', 'CI build'], 'ci/lint'], enable_auto_merge: false },
    }),
  );
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  const builds: Build[] = [];
  try {
    for (const [i, server] of servers.entries()) {
      const schema = `interleaved_${i}`;
      await admin.query(`drop schema if exists ${schema} cascade; create schema ${schema}`);
      const url = new URL(PG_URL);
      url.searchParams.set('options', `-c search_path=${schema}`);
      const service = await startProcess(
        join(REPO, server),
        ['--port', '0', '--db', url.toString(), '--config', config],
        { ...SERVICE_ENVIRONMENT, CHANGE_CONTROL_ADMIN_TOKEN: TOKEN },
        SERVICE_NODE_OPTIONS,
      );
      builds.push({ server, schema, service, requests: [], perSlice: [] });
      builds[i]!.requests = reportRequests(await seedReportScenario(new Api(service.url, TOKEN)));
    }
    const load = (build: Build, seconds: number) =>
      autocannon({
        url: build.service.url,
        connections: 16,
        duration: seconds,
        headers: { Authorization: `Token ${TOKEN}` },
        requests: build.requests,
      });
    for (const build of builds) await load(build, 2);
    for (let slice = 0; slice < SLICES; slice++) {
      for (const build of slice % 2 === 0 ? builds : [...builds].reverse()) {
        const result = await load(build, SLICE);
        build.perSlice.push(result.requests.average);
      }
    }
    for (const build of builds) {
      const mean = build.perSlice.reduce((a, b) => a + b, 0) / build.perSlice.length;
      console.log(
        `${build.server}: ${mean.toFixed(0)} reports/s; by slice ${build.perSlice.map((n) => n.toFixed(0)).join(' ')}`,
      );
    }
  } finally {
    for (const build of builds) await build.service.stop();
    for (const build of builds) await admin.query(`drop schema if exists ${build.schema} cascade`);
    await admin.end();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
