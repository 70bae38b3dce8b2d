// The scenarios of the benchmark, as functions of a running service (`bench/run.ts` runs them
// once each; `bench/interleaved.ts` runs them in turns on several builds).
import { Agent, request } from 'node:http';
import { readFileSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { Api, CC } from './api';
import { seedBranchChanges, RARE_TYPE } from './seed';
import { startService } from './service';
import { percentile } from './stats';

/** The administrator's token every benchmark starts the service with. */
export const TOKEN = 'bench0000000000000000000000000000000000';

const log = (m: string) => process.stderr.write(`[bench] ${m}\n`);

/**
 * A storm of token provisioning attempts (wrong passwords, as a guesser sends them), `perSecond`
 * a second, each from its own loopback address so the throttle lets every one reach the
 * password check. Returns a function that stops it and reports how it was answered.
 */
export function provisionStorm(base: string, perSecond: number): () => Promise<Record<number, number>> {
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

export async function timeSubmits(api: Api, crId: number, times: number): Promise<number[]> {
  const ms: number[] = [];
  for (let i = 0; i < times; i++) {
    const t0 = performance.now();
    await api.post(`${CC}change-requests/${crId}/submit/`);
    ms.push(performance.now() - t0);
    await api.post(`${CC}change-requests/${crId}/return-to-draft/`);
  }
  return ms;
}

export async function submitScenario(
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
export function rssMb(pid: number | undefined): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const mb = Number(/VmRSS:\s+(\d+)/.exec(status)![1]) / 1024;
  log(`RSS ${mb.toFixed(1)} MB, ${/Threads:\s+(\d+)/.exec(status)![1]} threads`);
  if (process.env.BENCH_SMAPS)
    writeFileSync(`${process.env.BENCH_SMAPS}.${Math.round(mb)}`, readFileSync(`/proc/${pid}/smaps`));
  return mb;
}

const keepAlive = new Agent({ keepAlive: true, maxSockets: 64 });

/** One HTTP request; resolves with the status once the answer is read. */
export function send(url: string, method: string, token: string, body?: unknown): Promise<number> {
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

export interface Kind {
  name: string;
  /** Out of 10. */
  weight: number;
  next(): { method: string; path: string; token?: string; body?: unknown };
}

/** Scenario 9: `connections` loops sending a weighted mix of kinds for `seconds`; req/s and p50/p99 per kind. */
export async function mixedLoad(
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
export async function firstReadAfterWrite(base: string, crId: number, times: number): Promise<Pairs> {
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
export interface Pairs {
  reads: number[];
  writes: number[];
}

/**
 * Scenario 11's writes at each size: 500 (about 2.5 s) rather than 100, so that one collection or
 * checkpoint landing in them moves the rate by a few per cent, not by a fifth (with 100, the same
 * build measured 79 % and 120 % in two whole runs).
 */
export const BRANCH_WRITES = 500;

/** Scenario 11: `count` device creates in a branch, one after another; writes per second. */
export async function branchWriteRate(admin: Api, schemaId: string, count: number, tag: string): Promise<number> {
  const inBranch = admin.inBranch(schemaId);
  const t0 = performance.now();
  for (let i = 0; i < count; i++)
    await inBranch.post('/api/dcim/devices/', { name: `grow-${tag}-${i}`, role: 'edge', site: i % 7 });
  return count / ((performance.now() - t0) / 1000);
}

/** Scenario 12: the built service started again on the database as the run left it, to listening. */
export async function startTimes(dbFile: string, config: string, times: number): Promise<number[]> {
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
export async function policyWriteScenario(admin: Api, times: number): Promise<{ create: number[]; edit: number[] }> {
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
export interface CountingStream {
  checkUpdates: number;
  /** Called after each chunk. */
  onData: () => void;
  close(): void;
}

export function openCountingStream(url: string, token: string): Promise<CountingStream> {
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
export const STREAMS_PER_USER = 10;

/** `count` users holding `permissions`, each with a token; answers the tokens. */
export async function usersWith(admin: Api, prefix: string, count: number, permissions: unknown[]): Promise<string[]> {
  const tokens: string[] = [];
  for (let i = 0; i < count; i++) {
    const user = await admin.post('/api/users/users/', { username: `${prefix}-${i}` });
    for (const [n, p] of permissions.entries())
      await admin.post('/api/users/permissions/', { name: `${prefix}-${i}-${n}`, users: [user.id], ...(p as object) });
    tokens.push((await admin.post('/api/users/tokens/', { user: user.id })).key as string);
  }
  return tokens;
}

let watcherSets = 0;

/**
 * Scenario 6: `streams` open event streams (10 per user: the most one user may hold); each
 * pipeline report (PATCH of a check, sequential) is timed from sending it until every stream has
 * received its check_updated event.
 */
export async function streamScenario(
  url: string,
  admin: Api,
  checkId: number,
  streams: number,
  reports: number,
): Promise<number[]> {
  // A name of their own each time: the interleaved bench runs this scenario once per round.
  const tokens = await usersWith(admin, `bench-watcher-${++watcherSets}`, Math.ceil(streams / STREAMS_PER_USER), [
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

/** Scenario 15: the objects one bulk write carries. */
export const BULK_OBJECTS = 1000;

/**
 * Scenario 15: `rounds` times, in a fresh branch with a change request, one bulk create of
 * `BULK_OBJECTS` devices, one bulk update of them all, one bulk delete of them all; ms each.
 */
export async function bulkWriteScenario(
  admin: Api,
  rounds: number,
): Promise<{ create: number[]; update: number[]; delete: number[] }> {
  const out = { create: [] as number[], update: [] as number[], delete: [] as number[] };
  for (let r = 0; r < rounds; r++) {
    const branch = await admin.post('/api/plugins/branching/branches/', { name: `bench-bulk-${r}` });
    await admin.post(`${CC}change-requests/`, { branch: branch.id, title: `Bulk ${r}` });
    const inBranch = admin.inBranch(branch.schema_id);
    const items = Array.from({ length: BULK_OBJECTS }, (_, i) => ({
      name: `bulk-${r}-${i}`,
      status: 'planned',
      role: 'edge',
      site: i % 7,
    }));
    let t0 = performance.now();
    const created = await inBranch.post<Array<{ id: number }>>('/api/dcim/devices/', items);
    out.create.push(performance.now() - t0);
    t0 = performance.now();
    await inBranch.patch(
      '/api/dcim/devices/',
      created.map((d) => ({ id: d.id, status: 'active' })),
    );
    out.update.push(performance.now() - t0);
    t0 = performance.now();
    await inBranch.call(
      'DELETE',
      '/api/dcim/devices/',
      created.map((d) => ({ id: d.id })),
      [204],
    );
    out.delete.push(performance.now() - t0);
  }
  return out;
}

/** Scenario 16: `times` reads of `path` (in the branch `schemaId`, or main), ms each. */
export async function listReadTimes(
  admin: Api,
  path: string,
  schemaId: string | null,
  times: number,
): Promise<number[]> {
  const api = schemaId ? admin.inBranch(schemaId) : admin;
  await api.get(path);
  const out: number[] = [];
  for (let i = 0; i < times; i++) {
    const t0 = performance.now();
    await api.get(path);
    out.push(performance.now() - t0);
  }
  return out;
}
