// Builds of the service compared on every SQLite scenario of `npm run bench`, in turns: each
// build runs as its own process on its own database file, seeded alike, and each scenario is
// measured in rounds, one slice per build, the order reversed every other round, so that every
// build meets the same moments of a busy machine. Sequential runs drift with the machine by more
// than the builds differ by.
//   BENCH_BUILDS='[{"label":"base","server":"/path/to/base/dist/server.js"},{"label":"new","server":"dist/server.js"}]' \
//     npx tsx bench/interleaved.ts
// A build may add "nodeArgs" (["--max-semi-space-size=4"]) and "env" ({"NAME": "value"}), the
// words its own `npm start` used, and "config" (merged into its configuration file). BENCH_ROUNDS rounds (default 6), BENCH_SLICE seconds per slice
// (default 2); BENCH_ONLY=1,3 measures only those scenarios. Prints, per scenario, each build's
// median over the rounds, the ratio of the second build to the first round by round (min-max and
// median), and each build's RSS at the end.
import autocannon from 'autocannon';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Api, CC } from './api';
import {
  branchWriteRate,
  firstReadAfterWrite,
  mixedLoad,
  policyWriteScenario,
  provisionStorm,
  rssMb,
  streamScenario,
  timeSubmits,
  TOKEN,
  type Kind,
} from './scenarios';
import {
  seedBranchChanges,
  seedCommentThreads,
  seedConditionPolicies,
  seedDetailScenario,
  seedManyRequests,
  seedReportScenario,
} from './seed';
import { reportRequests } from './report-requests';
import { startProcess, type RunningService } from './service';
import { percentile } from './stats';

interface BuildSpec {
  label: string;
  server: string;
  nodeArgs?: string[];
  env?: Record<string, string>;
  /** Merged into the configuration file's top level (e.g. `{"host": {"read_cache_entries": 100}}`). */
  config?: Record<string, unknown>;
}

interface Build extends BuildSpec {
  dir: string;
  dbFile: string;
  configFile: string;
  service: RunningService;
  admin: Api;
  crId: number;
  detailBranch: number;
  reportChecks: number[];
  commentReviews: Array<{ id: number; token: string }>;
  submitCr: number;
  growSchema: string;
}

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 6);
const SLICE = Number(process.env.BENCH_SLICE ?? 2);
const ONLY = process.env.BENCH_ONLY ? new Set(process.env.BENCH_ONLY.split(',').map((s) => s.trim())) : null;
const want = (n: string) => ONLY === null || ONLY.has(n);
const log = (m: string) => process.stderr.write(`[interleaved] ${m}\n`);
const median = (v: number[]) => percentile(v, 50);

function start(build: BuildSpec, dbFile: string, config: string): Promise<RunningService> {
  return startProcess(
    resolve(build.server),
    ['--port', '0', '--db', dbFile, '--config', config],
    { ...(build.env ?? {}), CHANGE_CONTROL_ADMIN_TOKEN: TOKEN },
    build.nodeArgs ?? [],
  );
}

async function prepare(spec: BuildSpec): Promise<Build> {
  const dir = mkdtempSync(join(tmpdir(), `cc-interleaved-${spec.label}-`));
  const dbFile = join(dir, 'bench.sqlite3');
  const config = join(dir, 'config.json');
  writeFileSync(
    config,
    JSON.stringify({
      change_control: { required_external_checks: [['ci/build', 'CI build'], 'ci/lint'], enable_auto_merge: false },
      ...(spec.config ?? {}),
    }),
  );
  const service = await start(spec, dbFile, config);
  const admin = new Api(service.url, TOKEN);
  log(`${spec.label}: seeding`);
  const { crId, commentReviews } = await seedDetailScenario(admin);
  const detailBranch = (await admin.get(`${CC}change-requests/${crId}/`)).branch as number;
  const reportChecks = await seedReportScenario(admin);
  await seedConditionPolicies(admin);
  seedCommentThreads(dbFile, crId, 2000, 1);
  seedManyRequests(dbFile, 20_000, 1);
  const branch = await admin.post('/api/plugins/branching/branches/', { name: 'bench-submit-10000' });
  seedBranchChanges(dbFile, branch.id, 10_000, 1_000_000);
  const submitCr = (await admin.post(`${CC}change-requests/`, { branch: branch.id, title: 'Submit 10000' })).id;
  const grow = await admin.post('/api/plugins/branching/branches/', { name: 'bench-grow' });
  await admin.post(`${CC}change-requests/`, { branch: grow.id, title: 'Growing branch' });
  return {
    ...spec,
    dir,
    dbFile,
    configFile: config,
    service,
    admin,
    crId,
    detailBranch,
    reportChecks,
    commentReviews,
    submitCr,
    growSchema: grow.schema_id,
  };
}

/** One scenario's figure per build and round; `higher`: whether a larger figure is better. */
interface Result {
  scenario: string;
  unit: string;
  higher: boolean;
  figures: number[][];
}

const results: Result[] = [];

/** Each build's resident set after each of its slices, in MB (memory under load, not after idling). */
const rssSamples = new Map<string, number[]>();

function residentMb(build: Build): number {
  const status = readFileSync(`/proc/${build.service.child.pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)![1]) / 1024;
}

/** The process's CPU time so far (user and system, all threads), in ms, from /proc. */
function cpuMs(build: Build): number {
  const fields = readFileSync(`/proc/${build.service.child.pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  // utime and stime are fields 14 and 15 of stat, 12 and 13 after the name; in clock ticks (100 a second).
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** Runs `measure` for each build in turn, ROUNDS times, the order reversed every other round. */
async function inTurns(
  builds: Build[],
  scenario: string,
  unit: string,
  higher: boolean,
  measure: (build: Build, round: number) => Promise<number>,
): Promise<void> {
  log(scenario);
  const figures = builds.map(() => [] as number[]);
  // CPU per request (req/s scenarios): what the machine's load distorts least.
  const cpu = builds.map(() => [] as number[]);
  for (const build of builds) await measure(build, -1); // warm-up
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? builds.map((_, i) => i) : builds.map((_, i) => builds.length - 1 - i);
    for (const i of order) {
      const build = builds[i]!;
      const before = cpuMs(build);
      const figure = await measure(build, round);
      figures[i]!.push(figure);
      if (unit === 'req/s') cpu[i]!.push(((cpuMs(build) - before) * 1000) / (figure * SLICE));
      if (build.service.child.exitCode === null && !scenario.startsWith('12.'))
        rssSamples.set(build.label, [...(rssSamples.get(build.label) ?? []), residentMb(build)]);
    }
  }
  results.push({ scenario, unit, higher, figures });
  // Said as it goes, so that a run stopped later still shows what it measured.
  log(`  ${unit}, medians: ${builds.map((b, i) => `${b.label} ${median(figures[i]!).toFixed(1)}`).join(', ')}`);
  if (unit === 'req/s')
    log(`  CPU µs a request, medians: ${builds.map((b, i) => `${b.label} ${median(cpu[i]!).toFixed(0)}`).join(', ')}`);
}

/** Requests per second of an autocannon slice. */
async function rate(url: string, options: Partial<autocannon.Options>): Promise<number> {
  const r = await autocannon({
    url,
    connections: 16,
    duration: SLICE,
    headers: { Authorization: `Token ${TOKEN}` },
    ...options,
  });
  if (r.non2xx > 0 || r.errors > 0) log(`  ${url}: ${r.non2xx} non-2xx, ${r.errors} errors`);
  return r.requests.average;
}

function mixKinds(build: Build, anchor: number): Kind[] {
  let readTurn = 0;
  let reportTurn = 0;
  let writeTurn = 0;
  return [
    {
      name: 'reads',
      weight: 7,
      next: () => ({
        method: 'GET',
        path: readTurn++ % 2 ? `${CC}change-requests/${build.crId}/` : `${CC}change-requests/?limit=50`,
      }),
    },
    {
      name: 'reports',
      weight: 2,
      next: () => {
        const n = reportTurn++;
        return {
          method: 'PATCH',
          path: `${CC}checks/${build.reportChecks[n % build.reportChecks.length]}/`,
          body: { status: n % 2 ? 'success' : 'failure', summary: `run ${n}` },
        };
      },
    },
    {
      name: 'writes',
      weight: 1,
      next: () => {
        const n = writeTurn++;
        const review = build.commentReviews[n % 3]!;
        return n % 2
          ? {
              method: 'PATCH',
              path: `${CC}reviews/${review.id}/`,
              token: review.token,
              body: { comment: `still ${n}` },
            }
          : {
              method: 'POST',
              path: `${CC}change-comments/`,
              body: { change_request: build.crId, change_diff: anchor, text: `mixed ${n}` },
            };
      },
    },
  ];
}

async function main(): Promise<void> {
  const specs = JSON.parse(process.env.BENCH_BUILDS ?? '[]') as BuildSpec[];
  if (specs.length < 2) throw new Error('BENCH_BUILDS names two builds or more');
  const builds: Build[] = [];
  try {
    for (const spec of specs) builds.push(await prepare(spec));
    const reports = builds.map((b) => reportRequests(b.reportChecks, { summary: true }));
    const offsets = builds.map(() => ({ n: 0 }));
    const index = (b: Build) => builds.indexOf(b);

    if (want('1'))
      await inTurns(builds, '1. change-request detail', 'req/s', true, (b) =>
        rate(`${b.service.url}${CC}change-requests/${b.crId}/`, {}),
      );
    if (want('2'))
      await inTurns(builds, '2. page of 50 of 20,000, gates_cleared', 'req/s', true, (b) =>
        rate(`${b.service.url}${CC}change-requests/?gates_cleared=true&limit=50&offset=500`, {}),
      );
    if (want('2b'))
      await inTurns(builds, '2b. the same, every page afresh', 'req/s', true, (b) => {
        const offset = offsets[index(b)]!;
        return rate(b.service.url, {
          requests: [
            {
              setupRequest: (req: autocannon.Request) => ({
                ...req,
                path: `${CC}change-requests/?gates_cleared=true&limit=50&offset=${offset.n++ % 6600}`,
              }),
            },
          ],
        });
      });
    if (want('3'))
      await inTurns(builds, '3. pipeline check report', 'req/s', true, (b) =>
        rate(b.service.url, { requests: reports[index(b)]! }),
      );
    if (want('5'))
      await inTurns(builds, '5. 1,000 of 2,000 threads', 'req/s', true, (b) =>
        rate(`${b.service.url}${CC}change-comments/?change_request_id=${b.crId}&limit=1000`, {}),
      );
    if (want('7'))
      await inTurns(builds, '7a. users/me, one connection', 'mean ms', false, async (b) => {
        const r = await autocannon({
          url: `${b.service.url}/api/users/me/`,
          connections: 1,
          duration: SLICE,
          headers: { Authorization: `Token ${TOKEN}` },
        });
        return r.latency.average;
      });
    if (want('7'))
      await inTurns(builds, '7b. the same during 20 sign-ins/s', 'mean ms', false, async (b) => {
        const stop = provisionStorm(b.service.url, 20);
        const r = await autocannon({
          url: `${b.service.url}/api/users/me/`,
          connections: 1,
          duration: SLICE,
          headers: { Authorization: `Token ${TOKEN}` },
        });
        await stop();
        return r.latency.average;
      });
    if (want('10'))
      await inTurns(builds, '10. first detail read after a write (200 changes)', 'p50 ms', false, async (b) =>
        percentile((await firstReadAfterWrite(b.service.url, b.crId, 100)).reads, 50),
      );
    if (want('9')) {
      const anchors = await Promise.all(
        builds.map(
          async (b) =>
            (await b.admin.get(`/api/plugins/branching/changes/?branch_id=${b.detailBranch}&limit=1`)).results[0]
              .id as number,
        ),
      );
      await inTurns(builds, '9. mixed load, 16 connections', 'req/s', true, async (b) => {
        const kinds = await mixedLoad(b.service.url, mixKinds(b, anchors[index(b)]!), 16, SLICE);
        return kinds.reduce((sum, k) => sum + k.rps, 0);
      });
    }
    if (want('6'))
      await inTurns(builds, '6. check report to 100 open streams', 'median ms', false, async (b) =>
        median(await streamScenario(b.service.url, b.admin, b.reportChecks[0]!, 100, 10)),
      );
    if (want('8'))
      await inTurns(builds, '8. policy create and edit (25 of 20,000 governed)', 'median ms', false, async (b) => {
        const { create, edit } = await policyWriteScenario(b.admin, 1);
        return median([...create, ...edit]);
      });
    if (want('4'))
      await inTurns(builds, '4. submit, 10,000 changes', 'median ms', false, async (b) =>
        median(await timeSubmits(b.admin, b.submitCr, 2)),
      );
    if (want('11'))
      await inTurns(builds, '11. object writes into one branch', 'writes/s', true, (b, round) =>
        branchWriteRate(b.admin, b.growSchema, 100, `r${round}`),
      );
    const rss = builds.map((b) => rssMb(b.service.child.pid));
    if (want('12')) {
      for (const b of builds) await b.service.stop();
      await inTurns(builds, '12. service start (20,000 requests)', 'ms', false, async (b) => {
        const t0 = performance.now();
        const again = await start(b, b.dbFile, b.configFile);
        const ms = performance.now() - t0;
        await again.stop();
        return ms;
      });
    }
    print(builds, rss);
  } finally {
    for (const b of builds) {
      await b.service.stop();
      rmSync(b.dir, { recursive: true, force: true });
    }
  }
}

function print(builds: Build[], rss: number[]): void {
  const first = builds[0]!;
  const others = builds.slice(1);
  const f = (n: number) => (n >= 100 ? n.toFixed(0) : n.toFixed(1));
  console.log(
    `\n| scenario | unit | ${builds.map((b) => `${b.label} (median)`).join(' | ')} | ${others.map((b) => `${b.label} / ${first.label} by round (min–max, median)`).join(' | ')} |`,
  );
  console.log(`| --- | --- | ${builds.map(() => '---:').join(' | ')} | ${others.map(() => '---').join(' | ')} |`);
  for (const r of results) {
    const ratios = others.map((_, k) => {
      const ratio = r.figures[k + 1]!.map((v, i) => v / r.figures[0]![i]!).sort((a, b) => a - b);
      return `${ratio[0]!.toFixed(2)}–${ratio[ratio.length - 1]!.toFixed(2)}, ${median(ratio).toFixed(2)}`;
    });
    console.log(
      `| ${r.scenario} | ${r.unit} (${r.higher ? 'higher' : 'lower'} is better) | ${r.figures.map((v) => f(median(v))).join(' | ')} | ${ratios.join(' | ')} |`,
    );
  }
  console.log(
    `| 13. RSS at the end | MB (lower is better) | ${rss.map(f).join(' | ')} | ${others.map((_, k) => (rss[k + 1]! / rss[0]!).toFixed(2)).join(' | ')} |`,
  );
  const under = builds.map((b) => rssSamples.get(b.label) ?? [0]);
  console.log(
    `| 13b. RSS after each slice, median (max) | MB (lower is better) | ${under.map((v) => `${f(median(v))} (${f(Math.max(...v))})`).join(' | ')} | ${others.map((_, k) => (median(under[k + 1]!) / median(under[0]!)).toFixed(2)).join(' | ')} |`,
  );
  for (const r of results)
    console.error(`${r.scenario}: ${builds.map((b, i) => `${b.label} ${r.figures[i]!.map(f).join(' ')}`).join(' | ')}`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
