// The performance benchmark: seeds data, drives the built service over HTTP with concurrent
// connections (autocannon), and prints requests/s, p50 and p99 per scenario next to the same
// figures for a trivial Express JSON route measured in the same run (the ceiling).
//   npm run bench            (BENCH_DURATION=seconds per scenario, default 10)
// BENCH_ONLY=9,10 runs only the scenarios named (numbers as printed; `ceiling` for the trivial
// route) and seeds what they need: the small seeds of scenarios 1, 3 and 4 always (every
// scenario sees them in a full run), the 2,000 threads of 5 for 5, 9 and 10, the 20,000 requests
// for 2, 4, 8, 10, 12 and 13, the submit branches (and their submits) for 4, 10, 12 and 13 (13
// runs 2 and 8 as well: its first RSS is taken after them). Scenario 12 starts the service on
// the database the chosen ones left.
//   node esbuild.config.mjs server && BENCH_DURATION=5 BENCH_ONLY=9,10 npx tsx bench/run.ts
// BENCH_SMAPS=/tmp/x copies the service's memory map at each RSS point (/tmp/x.<MB>);
// BENCH_SERVICE_STDOUT=file keeps what it prints (with BENCH_NODE_ARGS=--trace-gc, each collection).
import autocannon from 'autocannon';
import { Agent, request } from 'node:http';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Api, CC } from './api';
import {
  RARE_TYPE,
  seedBranchChanges,
  seedCommentThreads,
  seedConditionPolicies,
  seedDetailScenario,
  seedManyRequests,
  seedReportScenario,
} from './seed';
import { startCeiling, startService } from './service';
import { percentile } from './stats';

const DURATION = Number(process.env.BENCH_DURATION ?? 10);
const TOKEN = 'bench0000000000000000000000000000000000';

const ONLY: Set<string> | null = process.env.BENCH_ONLY
  ? new Set(process.env.BENCH_ONLY.split(',').map((s) => s.trim()))
  : null;
if (ONLY?.has('13')) for (const needed of ['2', '8']) ONLY.add(needed);
/** Whether scenario `n` (as printed, or `ceiling`) is measured in this run. */
const want = (...n: Array<number | string>): boolean => ONLY === null || n.some((x) => ONLY.has(String(x)));

interface Row {
  scenario: string;
  rps: number;
  p50: number;
  p99: number;
  target: string;
  met: boolean | null;
}

const rows: Row[] = [];
const log = (m: string) => process.stderr.write(`[bench] ${m}\n`);

async function load(url: string, options: Partial<autocannon.Options>): Promise<autocannon.Result> {
  const result = await autocannon({
    url,
    connections: 16,
    duration: DURATION,
    headers: { Authorization: `Token ${TOKEN}` },
    ...options,
  });
  if (result.non2xx > 0 || result.errors > 0)
    log(`  ${url}: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
  return result;
}

async function warm(url: string, options: Partial<autocannon.Options> = {}): Promise<void> {
  await autocannon({ url, connections: 4, duration: 2, headers: { Authorization: `Token ${TOKEN}` }, ...options });
}

function record(scenario: string, r: autocannon.Result, target: string, met: boolean | null): void {
  rows.push({ scenario, rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, target, met });
}

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

/**
 * A storm of token provisioning attempts (wrong passwords, as a guesser sends them), `perSecond`
 * a second, each from its own loopback address so the throttle lets every one reach the
 * password check. Returns a function that stops it and reports how it was answered.
 */
function provisionStorm(base: string, perSecond: number): () => Promise<Record<number, number>> {
  const statuses: Record<number, number> = {};
  const pending = new Set<Promise<void>>();
  let n = 0;
  const send = (): void => {
    const i = n++;
    const address = `127.0.${10 + Math.floor(i / 250)}.${1 + (i % 250)}`;
    const body = JSON.stringify({ username: `guess-${i}`, password: `guess-${i}` });
    const done = new Promise<void>((resolve) => {
      const req = httpRequest(
        `${base}/api/users/tokens/provision/`,
        { method: 'POST', localAddress: address, agent: false, headers: { 'Content-Type': 'application/json' } },
        (res) => {
          statuses[res.statusCode ?? 0] = (statuses[res.statusCode ?? 0] ?? 0) + 1;
          res.resume();
          res.on('end', () => resolve());
        },
      );
      req.on('error', () => resolve());
      req.end(body);
    });
    pending.add(done);
    void done.then(() => pending.delete(done));
  };
  const timer = setInterval(send, 1000 / perSecond);
  return async () => {
    clearInterval(timer);
    await Promise.all(pending);
    return statuses;
  };
}

async function timeSubmits(api: Api, crId: number, times: number): Promise<number[]> {
  const ms: number[] = [];
  for (let i = 0; i < times; i++) {
    const t0 = performance.now();
    await api.post(`${CC}change-requests/${crId}/submit/`);
    ms.push(performance.now() - t0);
    await api.post(`${CC}change-requests/${crId}/return-to-draft/`);
  }
  return ms;
}

async function submitScenario(
  admin: Api,
  dbFile: string,
  changes: number,
  firstObjectId: number,
): Promise<{ ms: number[]; crId: number }> {
  const branch = await admin.post('/api/plugins/branching/branches/', { name: `bench-submit-${changes}` });
  seedBranchChanges(dbFile, branch.id, changes, firstObjectId);
  const cr = await admin.post(`${CC}change-requests/`, { branch: branch.id, title: `Submit ${changes}` });
  return { ms: await timeSubmits(admin, cr.id, 5), crId: cr.id };
}

/** The resident set of a process, in MB (Linux); its threads are logged with it (the checkpointer's, the hashing ones, when running). */
function rssMb(pid: number | undefined): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const mb = Number(/VmRSS:\s+(\d+)/.exec(status)![1]) / 1024;
  log(`RSS ${mb.toFixed(1)} MB, ${/Threads:\s+(\d+)/.exec(status)![1]} threads`);
  if (process.env.BENCH_SMAPS)
    writeFileSync(`${process.env.BENCH_SMAPS}.${Math.round(mb)}`, readFileSync(`/proc/${pid}/smaps`));
  return mb;
}

const keepAlive = new Agent({ keepAlive: true, maxSockets: 64 });

/** One HTTP request; resolves with the status once the answer is read. */
function send(url: string, method: string, token: string, body?: unknown): Promise<number> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const headers: Record<string, string> = { Authorization: `Token ${token}`, Accept: 'application/json' };
    if (payload !== undefined) headers['Content-Type'] = 'application/json';
    const req = request(url, { method, headers, agent: keepAlive }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end(payload);
  });
}

interface Kind {
  name: string;
  /** Out of 10. */
  weight: number;
  next(): { method: string; path: string; token?: string; body?: unknown };
}

/** Scenario 9: `connections` loops sending a weighted mix of kinds for `seconds`; req/s and p50/p99 per kind. */
async function mixedLoad(
  base: string,
  kinds: Kind[],
  connections: number,
  seconds: number,
): Promise<Array<{ name: string; count: number; rps: number; p50: number; p99: number; failed: number }>> {
  const wheel = kinds.flatMap((k) => Array.from({ length: k.weight }, () => k));
  const latencies = new Map(kinds.map((k) => [k.name, [] as number[]]));
  const failed = new Map(kinds.map((k) => [k.name, 0]));
  let turn = 0;
  const end = performance.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (performance.now() < end) {
        const kind = wheel[turn++ % wheel.length]!;
        const r = kind.next();
        const t0 = performance.now();
        const status = await send(`${base}${r.path}`, r.method, r.token ?? TOKEN, r.body);
        latencies.get(kind.name)!.push(performance.now() - t0);
        if (status >= 300) failed.set(kind.name, failed.get(kind.name)! + 1);
      }
    }),
  );
  return kinds.map((k) => {
    const l = latencies.get(k.name)!;
    return {
      name: k.name,
      count: l.length,
      rps: l.length / seconds,
      p50: percentile(l, 50),
      p99: percentile(l, 99),
      failed: failed.get(k.name)!,
    };
  });
}

/** Scenario 10: the first detail read after a write (the request's description edited), `times` times. */
async function firstReadAfterWrite(base: string, crId: number, times: number): Promise<Pairs> {
  const pairs: Pairs = { reads: [], writes: [] };
  for (let i = 0; i < times; i++) {
    const w0 = performance.now();
    const written = await send(`${base}${CC}change-requests/${crId}/`, 'PATCH', TOKEN, { description: `note ${i}` });
    pairs.writes.push(performance.now() - w0);
    if (written !== 200) throw new Error(`edit of ${crId}: ${written}`);
    const t0 = performance.now();
    const status = await send(`${base}${CC}change-requests/${crId}/`, 'GET', TOKEN);
    pairs.reads.push(performance.now() - t0);
    if (status !== 200) throw new Error(`detail of ${crId}: ${status}`);
  }
  return pairs;
}

/** Scenario 10's pairs: each read's latency, and the write's before it (the target is the read's; the write's is printed beside it). */
interface Pairs {
  reads: number[];
  writes: number[];
}

/**
 * Scenario 11's writes at each size: 500 (about 2.5 s) rather than 100, so that one collection or
 * checkpoint landing in them moves the rate by a few per cent, not by a fifth (with 100, the same
 * build measured 79 % and 120 % in two whole runs).
 */
const BRANCH_WRITES = 500;

/** Scenario 11: `count` device creates in a branch, one after another; writes per second. */
async function branchWriteRate(admin: Api, schemaId: string, count: number, tag: string): Promise<number> {
  const inBranch = admin.inBranch(schemaId);
  const t0 = performance.now();
  for (let i = 0; i < count; i++)
    await inBranch.post('/api/dcim/devices/', { name: `grow-${tag}-${i}`, role: 'edge', site: i % 7 });
  return count / ((performance.now() - t0) / 1000);
}

/** Scenario 12: the built service started again on the database as the run left it, to listening. */
async function startTimes(dbFile: string, config: string, times: number): Promise<number[]> {
  const ms: number[] = [];
  for (let i = 0; i < times; i++) {
    const t0 = performance.now();
    const again = await startService(dbFile, config, TOKEN);
    ms.push(performance.now() - t0);
    await again.stop();
  }
  return ms;
}

/**
 * Scenario 8: a policy naming the type 25 of scenario 2's branches touch is created, edited
 * (its conditions change) and deleted, `times` times; each write re-matches what it can move.
 */
async function policyWriteScenario(admin: Api, times: number): Promise<{ create: number[]; edit: number[] }> {
  const create: number[] = [];
  const edit: number[] = [];
  for (let i = 0; i < times; i++) {
    let t0 = performance.now();
    const p = await admin.post(`${CC}policies/`, { name: `bench-rare-${i}`, object_types: [RARE_TYPE] });
    create.push(performance.now() - t0);
    t0 = performance.now();
    await admin.patch(`${CC}policies/${p.id}/`, { conditions: { attr: 'vid', op: 'gte', value: 100 + i } });
    edit.push(performance.now() - t0);
    await admin.delete(`${CC}policies/${p.id}/?force=true`);
  }
  return { create, edit };
}

/** An open event stream that counts the check_updated events it received. */
interface CountingStream {
  checkUpdates: number;
  /** Called after each chunk. */
  onData: () => void;
  close(): void;
}

function openCountingStream(url: string, token: string): Promise<CountingStream> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${url}${CC}stream/`,
      { headers: { Authorization: `Token ${token}`, Accept: 'text/event-stream' } },
      (res) => {
        const stream: CountingStream = { checkUpdates: 0, onData: () => undefined, close: () => res.destroy() };
        let tail = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          const text = tail + chunk;
          stream.checkUpdates += text.split('event: check_updated\n').length - 1;
          // Keep a partial line for the next chunk.
          tail = text.slice(Math.max(0, text.lastIndexOf('\n') + 1));
          if (text.includes(': connected')) resolve(stream);
          stream.onData();
        });
        res.on('error', () => undefined);
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** Streams one user may hold open at once (the service refuses one more). */
const STREAMS_PER_USER = 10;

/** `count` users holding `permissions`, each with a token; answers the tokens. */
async function usersWith(admin: Api, prefix: string, count: number, permissions: unknown[]): Promise<string[]> {
  const tokens: string[] = [];
  for (let i = 0; i < count; i++) {
    const user = await admin.post('/api/users/users/', { username: `${prefix}-${i}` });
    for (const [n, p] of permissions.entries())
      await admin.post('/api/users/permissions/', { name: `${prefix}-${i}-${n}`, users: [user.id], ...(p as object) });
    tokens.push((await admin.post('/api/users/tokens/', { user: user.id })).key as string);
  }
  return tokens;
}

/**
 * Scenario 6: `streams` open event streams (10 per user: the most one user may hold); each
 * pipeline report (PATCH of a check, sequential) is timed from sending it until every stream has
 * received its check_updated event.
 */
async function streamScenario(
  url: string,
  admin: Api,
  checkId: number,
  streams: number,
  reports: number,
): Promise<number[]> {
  const tokens = await usersWith(admin, 'bench-watcher', Math.ceil(streams / STREAMS_PER_USER), [
    { object_types: ['change_control.changerequest', 'change_control.mergecheck'], actions: ['view'] },
  ]);
  const open = await Promise.all(
    Array.from({ length: streams }, (_, i) => openCountingStream(url, tokens[Math.floor(i / STREAMS_PER_USER)]!)),
  );
  const ms: number[] = [];
  try {
    for (let i = 1; i <= reports; i++) {
      const t0 = performance.now();
      await admin.patch(`${CC}checks/${checkId}/`, { status: i % 2 ? 'failure' : 'success', summary: `report ${i}` });
      await new Promise<void>((done) => {
        const check = (): void => {
          if (open.every((s) => s.checkUpdates >= i)) done();
        };
        for (const s of open) s.onData = check;
        check();
      });
      ms.push(performance.now() - t0);
    }
  } finally {
    for (const s of open) s.close();
  }
  return ms;
}

/**
 * Scenario 14: `streams` event streams of users who may see no change request, each replaying
 * from the first kept event (`last_event_id=0`) over and over (reopened as soon as it is
 * connected), while `GET /api/status/` is timed: a replay of what a caller may not see must not
 * slow the service down for everyone else.
 */
async function replayingStreamsScenario(
  url: string,
  admin: Api,
  streams: number,
  checkId: number,
): Promise<autocannon.Result> {
  // A backlog of a few thousand events (each report announces the check and its request).
  for (let i = 0; i < 1500; i++)
    await admin.patch(`${CC}checks/${checkId}/`, { status: i % 2 ? 'failure' : 'success', summary: `backlog ${i}` });
  const tokens = await usersWith(admin, 'bench-blind', Math.ceil(streams / STREAMS_PER_USER), [
    { object_types: ['change_control.changerequest'], actions: ['view'], constraints: { id: -1 } },
  ]);
  let running = true;
  let replays = 0;
  const replayer = async (token: string): Promise<void> => {
    while (running) {
      await new Promise<void>((done) => {
        const req = request(
          `${url}${CC}stream/?last_event_id=0`,
          { headers: { Authorization: `Token ${token}`, Accept: 'text/event-stream' } },
          (res) => {
            res.setEncoding('utf8');
            res.on('data', (chunk: string) => {
              if (chunk.includes(': connected')) {
                replays++;
                // The replay runs as the stream opens; a short wait lets it read the backlog.
                setTimeout(() => res.destroy(), 20);
              }
            });
            res.on('close', () => done());
            res.on('error', () => done());
          },
        );
        req.on('error', () => done());
        req.end();
      });
    }
  };
  const loops = Array.from({ length: streams }, (_, i) => replayer(tokens[Math.floor(i / STREAMS_PER_USER)]!));
  try {
    await warm(`${url}/api/status/`);
    return await load(`${url}/api/status/`, { connections: 1 });
  } finally {
    running = false;
    await Promise.all(loops);
    log(`  ${replays} replays from event 0 during the scenario`);
  }
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'cc-bench-'));
  const dbFile = join(dir, 'bench.sqlite3');
  const config = join(dir, 'config.json');
  writeFileSync(
    config,
    JSON.stringify({
      change_control: { required_external_checks: [['ci/build', 'CI build'], 'ci/lint'], enable_auto_merge: false },
    }),
  );
  const ceiling = await startCeiling();
  const svc = await startService(dbFile, config, TOKEN);
  const admin = new Api(svc.url, TOKEN);
  try {
    log(`service ${svc.url}, ceiling ${ceiling.url}, ${DURATION} s per scenario`);

    log('seeding scenario 1 (3 policies x 2 rules, 200 changes, 10 reviews, 8 checks)');
    const { crId, commentReviews } = await seedDetailScenario(admin);
    const detailCr = await admin.get(`${CC}change-requests/${crId}/`);
    const checks = await admin.get(`${CC}checks/?change_request_id=${crId}`);
    log(`  request ${crId}: status ${detailCr.status}, ${detailCr.policies.length} policies, ${checks.count} checks`);
    log('seeding scenario 3 (64 reported checks)');
    const reportChecks = await seedReportScenario(admin);
    log('seeding scenario 4 (50 policies with conditions)');
    await seedConditionPolicies(admin);

    if (want('ceiling')) {
      await warm(`${ceiling.url}/ping/`);
      const ceil = await load(`${ceiling.url}/ping/`, {});
      record('ceiling: trivial Express JSON route', ceil, '-', null);
    }

    if (want(1)) {
      const detailUrl = `${svc.url}${CC}change-requests/${crId}/`;
      await warm(detailUrl);
      const detail = await load(detailUrl, {});
      record(
        '1. change-request detail, live evaluation',
        detail,
        '>= 1500 req/s, p99 < 20 ms',
        detail.requests.average >= 1500 && detail.latency.p99 < 20,
      );
    }

    // 7. A plain read while passwords are being guessed: hashing must not stall the event loop.
    if (want(7)) {
      const readUrl = `${svc.url}/api/users/me/`;
      await warm(readUrl, { connections: 1 });
      const quiet = await load(readUrl, { connections: 1 });
      record('7a. plain read (GET users/me/), one connection, no other load', quiet, '-', null);
      const stop = provisionStorm(svc.url, 20);
      const stormy = await load(readUrl, { connections: 1 });
      const storm = await stop();
      record('7b. the same read during 20 provisioning attempts/s', stormy, 'p50 < 3 ms', stormy.latency.p50 < 3);
      log(`  provisioning attempts answered: ${JSON.stringify(storm)}`);
    }

    let turn = 0;
    const flip = new Map<number, boolean>();
    const reportRequest = {
      method: 'PATCH' as const,
      setupRequest: (req: autocannon.Request) => {
        const id = reportChecks[turn++ % reportChecks.length]!;
        const pass = !flip.get(id);
        flip.set(id, pass);
        return {
          ...req,
          path: `${CC}checks/${id}/`,
          headers: { ...req.headers, 'Content-Type': 'application/json' },
          body: JSON.stringify({ status: pass ? 'success' : 'failure', summary: pass ? 'green' : 'red' }),
        };
      },
    };
    if (want(3)) {
      await warm(svc.url, { requests: [reportRequest] });
      const report = await load(svc.url, { requests: [reportRequest] });
      record(
        '3. pipeline check report (PATCH checks/{id}/ with its refresh)',
        report,
        '>= 1000 req/s',
        report.requests.average >= 1000,
      );
    }

    if (want(5, 9, 10)) {
      log('seeding scenario 5 (2,000 comment threads naming attributes on one request)');
      seedCommentThreads(dbFile, crId, 2000, 1);
    }
    if (want(5)) {
      const threadsUrl = `${svc.url}${CC}change-comments/?change_request_id=${crId}&limit=1000`;
      await warm(threadsUrl);
      const threads = await load(threadsUrl, {});
      record('5. 1,000 of 2,000 threads with attribute and outdated', threads, '-', null);
    }

    let firstSmall: Pairs = { reads: [], writes: [] };
    if (want(10)) {
      log('scenario 10: first detail read after a write, 200 changes');
      firstSmall = await firstReadAfterWrite(svc.url, crId, 1000);
    }

    let mixed: Awaited<ReturnType<typeof mixedLoad>> = [];
    if (want(9)) {
      log('scenario 9: mixed load, 16 connections');
      const anchor = (await admin.get(`/api/plugins/branching/changes/?branch_id=${detailCr.branch}&limit=1`))
        .results[0].id as number;
      let readTurn = 0;
      let reportTurn = 0;
      let writeTurn = 0;
      mixed = await mixedLoad(
        svc.url,
        [
          {
            name: 'reads (detail, list)',
            weight: 7,
            next: () => ({
              method: 'GET',
              path: readTurn++ % 2 ? `${CC}change-requests/${crId}/` : `${CC}change-requests/?limit=50`,
            }),
          },
          {
            name: 'check reports',
            weight: 2,
            next: () => {
              const n = reportTurn++;
              return {
                method: 'PATCH',
                path: `${CC}checks/${reportChecks[n % reportChecks.length]}/`,
                body: { status: n % 2 ? 'success' : 'failure', summary: `run ${n}` },
              };
            },
          },
          {
            name: 'reviews and comments',
            weight: 1,
            next: () => {
              const n = writeTurn++;
              return n % 2
                ? {
                    method: 'PATCH',
                    path: `${CC}reviews/${commentReviews[n % 3]!.id}/`,
                    token: commentReviews[n % 3]!.token,
                    body: { comment: `still looking ${n}` },
                  }
                : {
                    method: 'POST',
                    path: `${CC}change-comments/`,
                    body: { change_request: crId, change_diff: anchor, text: `mixed ${n}` },
                  };
            },
          },
        ],
        16,
        DURATION,
      );
    }

    let streamed: number[] = [];
    if (want(6)) {
      log('scenario 6: 100 open event streams, 50 check reports');
      streamed = await streamScenario(svc.url, admin, reportChecks[0]!, 100, 50);
    }

    if (want(14)) {
      log('scenario 14: GET /api/status/ while 100 event streams replay what their users may not see');
      const r = await replayingStreamsScenario(svc.url, admin, 100, reportChecks[1]!);
      record('14. GET /api/status/, 100 streams replaying hidden events', r, 'p50 < 10 ms', r.latency.p50 < 10);
    }

    let grow: { id: number; schema_id: string } | undefined;
    let growCr: { id: number } | undefined;
    let rateEmpty = 0;
    if (want(11)) {
      log('scenario 11: object writes into one branch, empty');
      grow = await admin.post('/api/plugins/branching/branches/', { name: 'bench-grow' });
      growCr = await admin.post(`${CC}change-requests/`, { branch: grow!.id, title: 'Growing branch' });
      rateEmpty = await branchWriteRate(admin, grow!.schema_id, BRANCH_WRITES, 'a');
    }

    if (want(2, 4, 8, 10, 12, 13)) {
      log('seeding scenario 2 (20,000 change requests)');
      seedManyRequests(dbFile, 20_000, 1);
    }
    if (want(2)) {
      const listUrl = `${svc.url}${CC}change-requests/?gates_cleared=true&limit=50&offset=500`;
      await warm(listUrl);
      const list = await load(listUrl, {});
      record('2. page of 50 of 20,000 requests, gates_cleared filter', list, 'p50 < 15 ms', list.latency.p50 < 15);
      // The same query with the offset moving over every match, each page read once: the cost of
      // a page computed afresh, which repeated reads between writes avoid.
      let offset = 0;
      const coldPages = {
        setupRequest: (req: autocannon.Request) => ({
          ...req,
          path: `${CC}change-requests/?gates_cleared=true&limit=50&offset=${offset++}`,
        }),
      };
      const cold = await load(svc.url, { requests: [coldPages], amount: 6600 });
      record('2b. the same, every page computed afresh (offset moves)', cold, 'p50 < 15 ms', cold.latency.p50 < 15);
    }

    let policyWrites: { create: number[]; edit: number[] } = { create: [], edit: [] };
    if (want(8)) {
      log('scenario 8: policy writes that can govern 25 of the 20,000 requests');
      policyWrites = await policyWriteScenario(admin, 5);
    }
    const rss20k = rssMb(svc.child.pid);

    let small: number[] = [];
    let large: number[] = [];
    let firstLarge: Pairs = { reads: [], writes: [] };
    if (want(4, 10, 12, 13)) {
      log('scenario 4: submit with 10,000 changes and 50 policies with conditions');
      const submitted = await submitScenario(admin, dbFile, 10_000, 1_000_000);
      small = submitted.ms;
      if (want(4, 12, 13)) {
        log('scenario 4: submit with 100,000 changes');
        large = (await submitScenario(admin, dbFile, 100_000, 2_000_000)).ms;
      }
      if (want(10)) {
        log('scenario 10: first detail read after a write, 10,000 changes');
        firstLarge = await firstReadAfterWrite(svc.url, submitted.crId, 1000);
      }
    }
    const rss100k = rssMb(svc.child.pid);

    let rateFull = 0;
    if (grow && growCr) {
      log('scenario 11: object writes into one branch of 100,000 changes');
      seedBranchChanges(dbFile, grow.id, 100_000, 3_000_000);
      // Rows written beside the service: the state kept per branch is rebuilt once, by its first
      // reader (docs/architecture.md); the writes are timed after it, as a running service sees them.
      const rebuildStart = performance.now();
      await admin.get(`${CC}change-requests/${growCr.id}/`);
      log(`  state kept per branch rebuilt after the bulk seed: ${(performance.now() - rebuildStart).toFixed(0)} ms`);
      // As many writes as on the empty branch.
      rateFull = await branchWriteRate(admin, grow.schema_id, BRANCH_WRITES, 'b');
    }

    await svc.stop();
    let starts: number[] = [];
    if (want(12)) {
      log('scenario 12: service start on the database of 20,000 requests');
      starts = await startTimes(dbFile, config, 5);
    }

    const fmt = (n: number, digits = 1) => n.toFixed(digits).padStart(9);
    console.log(
      '\nscenario'.padEnd(70) + 'req/s'.padStart(9) + 'p50 ms'.padStart(9) + 'p99 ms'.padStart(9) + '  target',
    );
    for (const r of rows) {
      const verdict = r.met === null ? '' : r.met ? '  (met)' : '  (MISSED)';
      console.log(r.scenario.padEnd(69) + fmt(r.rps, 0) + fmt(r.p50) + fmt(r.p99) + `  ${r.target}${verdict}`);
    }
    const sorted = [...streamed].sort((a, b) => a - b);
    if (want(6))
      console.log(
        `\n6. check report to 100 open event streams (answer, commit, and every stream received it): median ${median(streamed).toFixed(1)} ms, slowest ${sorted[sorted.length - 1]!.toFixed(1)} ms over ${streamed.length} reports; target: within 1 s`,
      );
    const m10 = median(small.length ? small : [0]);
    const m100 = median(large.length ? large : [0]);
    if (want(4)) {
      console.log(
        `\n4. submit, 10,000 changes, 50 policies with conditions: median ${m10.toFixed(0)} ms (runs: ${small.map((v) => v.toFixed(0)).join(', ')}) target <= 150 ms${m10 <= 150 ? ' (met)' : ' (MISSED)'}`,
      );
      console.log(
        `   submit, 100,000 changes: median ${m100.toFixed(0)} ms (runs: ${large.map((v) => v.toFixed(0)).join(', ')}) ${(m100 / m10).toFixed(1)}x the 10,000 figure (target: the ratio below)`,
      );
    }
    if (want(9)) {
      console.log(
        `\n9. mixed load, 16 connections (70 % detail and list reads, 20 % check reports, 10 % reviews and comments), ${DURATION} s:`,
      );
      for (const k of mixed)
        console.log(
          `   ${k.name.padEnd(24)} ${k.rps.toFixed(0).padStart(6)} req/s  p50 ${k.p50.toFixed(1).padStart(6)} ms  p99 ${k.p99.toFixed(1).padStart(6)} ms${k.failed ? `  (${k.failed} not 2xx)` : ''}`,
        );
      const readsP99 = mixed[0]!.p99;
      console.log(
        `   total ${mixed.reduce((a, k) => a + k.rps, 0).toFixed(0)} req/s; target: reads p99 <= 25 ms${readsP99 <= 25 ? ' (met)' : ' (MISSED)'}`,
      );
    }
    const firstLine = (label: string, { reads: ms, writes }: Pairs, target: number) =>
      ms.length
        ? `   ${label}: p50 ${percentile(ms, 50).toFixed(1)} ms, p99 ${percentile(ms, 99).toFixed(1)} ms over ${ms.length} reads; target <= ${target} ms${percentile(ms, 99) <= target ? ' (met)' : ' (MISSED)'}` +
          ` (the edits before them: p50 ${percentile(writes, 50).toFixed(1)} ms, p99 ${percentile(writes, 99).toFixed(1)} ms)`
        : `   ${label}: not measured`;
    if (want(10)) {
      console.log(`\n10. change-request detail, first read after a write:`);
      console.log(firstLine('200 changes', firstSmall, 5));
      console.log(firstLine('10,000 changes', firstLarge, 30));
    }
    if (want(11))
      console.log(
        `\n11. object writes into one branch (${BRANCH_WRITES} at each size): ${rateEmpty.toFixed(0)}/s at first, ${rateFull.toFixed(0)}/s at 100,000 changes (${((rateFull / rateEmpty) * 100).toFixed(0)} %); target >= 80 %${rateFull >= 0.8 * rateEmpty ? ' (met)' : ' (MISSED)'}`,
      );
    if (want(12))
      console.log(
        `\n12. service start on the database of 20,000 requests (node dist/server.js to listening): median ${median(starts).toFixed(0)} ms (runs: ${starts.map((v) => v.toFixed(0)).join(', ')}); target <= 300 ms${median(starts) <= 300 ? ' (met)' : ' (MISSED)'}`,
      );
    if (want(13))
      console.log(
        `\n13. RSS after the 20,000-request scenarios: ${rss20k.toFixed(0)} MB (target <= 150 MB${rss20k <= 150 ? ', met' : ', MISSED'}); after the 100,000-change submit: ${rss100k.toFixed(0)} MB (target <= 200 MB${rss100k <= 200 ? ', met' : ', MISSED'})`,
      );
    if (want(4))
      console.log(
        `\n    submit ratio 100,000 vs 10,000 changes: ${(m100 / m10).toFixed(1)}x; target <= 9x${m100 / m10 <= 9 ? ' (met)' : ' (MISSED)'}`,
      );
    if (want(8))
      console.log(
        `\n8. create or edit a policy that can govern 25 of 20,000 requests: create median ${median(policyWrites.create).toFixed(0)} ms (runs: ${policyWrites.create.map((v) => v.toFixed(0)).join(', ')}), edit median ${median(policyWrites.edit).toFixed(0)} ms (runs: ${policyWrites.edit.map((v) => v.toFixed(0)).join(', ')}); target <= 100 ms${Math.max(median(policyWrites.create), median(policyWrites.edit)) <= 100 ? ' (met)' : ' (MISSED)'}`,
      );
  } finally {
    await svc.stop();
    await ceiling.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
