// Scenario 10's write-then-read pairs (the request's description edited, then its detail read),
// measured by what the machine's load does not distort: the service's garbage collections
// (`--trace-gc-nvp`: how many, their pauses, the bytes allocated and promoted per pair) and its
// main thread's CPU time per pair and per read (/proc/PID/task/PID/schedstat), beside the reads'
// latencies.
//   node esbuild.config.mjs server && npx tsx bench/gc-pairs.ts
// GC_PAIRS (default 1000) pairs are measured after 200 to warm up, on scenario 1's request with
// what the full benchmark has seeded before scenario 10 (64 reported checks, 50 policies with
// conditions, 2,000 comment threads). HEAP_SAMPLE=file.json also samples every allocation of
// the measured pairs (bench/heap-sample.cjs) and prints where the bytes were allocated;
// HEAP_SAMPLE_SURVIVORS=1 with it keeps only what survived a scavenge (what fills the old
// generation; see bench/heap-sample.cjs). BENCH_NODE_ARGS adds Node options to the service's;
// GC_LOG=file keeps the collections' --trace-gc-nvp lines of the measured pairs. PAIR_TRACE=file
// preloads bench/pair-trace.cjs and prints the slowest reads one by one: when the service saw the
// read and answered it, the collections and checkpointer messages that overlapped it, and how long
// the loop stayed busy after the write's answer (all on the machine's monotonic clock).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SERVICE_ENVIRONMENT, SERVICE_NODE_OPTIONS } from '../launch/service-launch';
import { Api, CC } from './api';
import { seedCommentThreads, seedConditionPolicies, seedDetailScenario, seedReportScenario } from './seed';
import { REPO, startProcess } from './service';
import { percentile } from './stats';

const TOKEN = 'bench0000000000000000000000000000000000';
const PAIRS = Number(process.env.GC_PAIRS ?? 1000);
const HEAP_SAMPLE = process.env.HEAP_SAMPLE;
const PAIR_TRACE = process.env.PAIR_TRACE;
const monotonic = (): number => Number(process.hrtime.bigint()) / 1e6;
const log = (m: string) => process.stderr.write(`[gc-pairs] ${m}\n`);
const agent = new Agent({ keepAlive: true, maxSockets: 1 });

function send(url: string, method: string, body?: unknown): Promise<number> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const headers: Record<string, string> = { Authorization: `Token ${TOKEN}`, Accept: 'application/json' };
    if (payload !== undefined) headers['Content-Type'] = 'application/json';
    const req = request(url, { method, headers, agent }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end(payload);
  });
}

/** The main thread's CPU time so far, in ms. */
function cpuMs(pid: number): number {
  return Number(readFileSync(`/proc/${pid}/task/${pid}/schedstat`, 'utf8').split(' ')[0]) / 1e6;
}

interface Gc {
  line: string;
  kind: string;
  pause: number;
  allocated: number;
  promoted: number;
}

function parseGc(line: string): Gc | undefined {
  const field = (name: string) => new RegExp(`(?:^|\\s)${name}=(\\S+)`).exec(line)?.[1];
  const kind = field('gc');
  if (!kind) return undefined;
  return {
    line,
    kind,
    pause: Number(field('pause')),
    allocated: Number(field('allocated') ?? 0),
    promoted: Number(field('promoted') ?? 0),
  };
}

/** The bundle's source file for each line of dist/server.js (esbuild writes `// path` before each module). */
function bundleFiles(): (line: number) => string {
  const lines = readFileSync(join(REPO, 'dist', 'server.js'), 'utf8').split('\n');
  const starts: Array<[number, string]> = [];
  lines.forEach((l, i) => {
    const m = /^\/\/ ((?:server|contract|node_modules)\/\S+)$/.exec(l);
    if (m) starts.push([i, m[1]!.replace(/^node_modules\//, '')]);
  });
  return (line) => {
    let lo = 0;
    let hi = starts.length - 1;
    let found = '?';
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (starts[mid]![0] <= line) {
        found = starts[mid]![1];
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return found;
  };
}

interface ProfileNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: ProfileNode[];
}

/** Where the sampled bytes were allocated: by function, and by the service's source file that asked (nearest frame in server/). */
function summarise(profile: { head: ProfileNode }, pairs: number): void {
  const fileOf = bundleFiles();
  const bySelf = new Map<string, number>();
  const byServerFile = new Map<string, number>();
  let total = 0;
  const walk = (node: ProfileNode, nearest: string): void => {
    const f = node.callFrame;
    const file = f.url.endsWith('dist/server.js') ? fileOf(f.lineNumber) : f.url.replace(/^.*\//, '') || '(native)';
    const here = file.startsWith('server/') ? `${file} ${f.functionName || '(anonymous)'}` : nearest;
    if (node.selfSize) {
      total += node.selfSize;
      const self = `${f.functionName || '(anonymous)'} ${file}:${f.lineNumber + 1}`;
      bySelf.set(self, (bySelf.get(self) ?? 0) + node.selfSize);
      byServerFile.set(here, (byServerFile.get(here) ?? 0) + node.selfSize);
    }
    for (const c of node.children) walk(c, here);
  };
  walk(profile.head, '(outside server/)');
  const top = (m: Map<string, number>, n: number) =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([k, v]) => `  ${(v / pairs / 1024).toFixed(1).padStart(7)} kB/pair  ${k}`)
      .join('\n');
  console.log(`\nsampled allocations: ${(total / pairs / 1024).toFixed(0)} kB per pair`);
  console.log(`by allocating function:\n${top(bySelf, 30)}`);
  console.log(`by the nearest function of server/:\n${top(byServerFile, 40)}`);
}

interface PairTrace {
  gcs: Array<{ kind: number; start: number; ms: number }>;
  requests: Array<{
    method: string;
    arrived: number;
    schedArrived: [number, number];
    finished: number;
    schedFinished: [number, number];
    nextImmediate: number;
    nextTimer: number;
  }>;
  worker: Array<{ at: number; sent?: string; received?: string }>;
}

/** The slowest reads, each with what the service did around it (bench/pair-trace.cjs). */
function explainSlowest(
  trace: PairTrace,
  times: Array<{ w0: number; w1: number; r0: number; r1: number; clientWait: number }>,
): void {
  const gcName: Record<number, string> = {
    1: 'scavenge',
    2: 'minor-ms',
    4: 'mark-compact',
    8: 'incremental',
    16: 'weak',
  };
  const f = (n: number) => n.toFixed(2);
  const rows = times.map((t, i) => {
    const write = trace.requests.find((r) => r.method === 'PATCH' && r.arrived >= t.w0 && r.arrived <= t.w1);
    const read = trace.requests.find((r) => r.method === 'GET' && r.arrived >= t.r0 && r.arrived <= t.r1);
    const gcs = trace.gcs.filter((g) => g.start + g.ms >= t.r0 && g.start <= t.r1);
    const worker = trace.worker.filter((w) => w.at >= t.w0 && w.at <= t.r1);
    return { i, ms: t.r1 - t.r0, t, write, read, gcs, worker };
  });
  const slow = [...rows].sort((a, b) => b.ms - a.ms).slice(0, 20);
  console.log(
    '\nslowest reads (ms; "before" = from the client sending to the service seeing it, "in" = service seeing to answering, "after" = answered to the client having it):',
  );
  for (const r of slow) {
    const { t, write, read } = r;
    const parts = [`#${r.i} read ${f(r.ms)}`, `write ${f(t.w1 - t.w0)}`];
    if (write)
      parts.push(
        `write in ${f(write.finished - write.arrived)}, loop after its answer: immediate +${f(write.nextImmediate - write.finished)}, timer +${f(write.nextTimer - write.finished)}`,
      );
    if (read)
      parts.push(
        `read before ${f(read.arrived - t.r0)} in ${f(read.finished - read.arrived)} after ${f(t.r1 - read.finished)}`,
      );
    if (write && read) {
      // From the write's answer to the read's: the service's main thread on a core, waiting for one, and idle.
      const run = read.schedFinished[0] - write.schedFinished[0];
      const wait = read.schedFinished[1] - write.schedFinished[1];
      parts.push(
        `service from write answered to read answered: ${f(read.finished - write.finished)} = cpu ${f(run)} + waiting for a core ${f(wait)} + idle ${f(read.finished - write.finished - run - wait)}; read cpu ${f(read.schedFinished[0] - read.schedArrived[0])}`,
      );
    }
    if (t.clientWait > 0.05) parts.push(`client waited for a core ${f(t.clientWait)}`);
    for (const g of r.gcs) parts.push(`${gcName[g.kind] ?? g.kind} ${f(g.ms)} at +${f(g.start - t.r0)}`);
    if (r.worker.length)
      parts.push(`checkpointer: ${r.worker.map((w) => `${w.sent ?? w.received} at ${f(w.at - t.r0)}`).join(', ')}`);
    console.log(`  ${parts.join('; ')}`);
  }
  const inGc = slow.slice(0, 10).filter((r) => r.gcs.length > 0).length;
  const allGc = rows.filter((r) => r.gcs.length > 0);
  console.log(
    `of the 10 slowest, ${inGc} overlapped a collection; of all ${rows.length} reads, ${allGc.length} did (their p50 ${f(
      percentile(
        allGc.map((r) => r.ms),
        50,
      ),
    )} ms)`,
  );
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'cc-gc-pairs-'));
  const dbFile = join(dir, 'bench.sqlite3');
  const config = join(dir, 'config.json');
  writeFileSync(
    config,
    JSON.stringify({
      change_control: { required_external_checks: [['ci/build', 'CI build'], 'ci/lint'], enable_auto_merge: false },
    }),
  );
  const extra = [
    ...(process.env.MEMO_TRACE ? [] : []),
    '--trace-gc-nvp',
    ...(HEAP_SAMPLE ? ['--require', join(REPO, 'bench', 'heap-sample.cjs')] : []),
    ...(PAIR_TRACE ? ['--require', join(REPO, 'bench', 'pair-trace.cjs')] : []),
  ];
  const svc = await startProcess(
    join(REPO, 'dist', 'server.js'),
    ['--port', '0', '--db', dbFile, '--config', config],
    {
      ...SERVICE_ENVIRONMENT,
      CHANGE_CONTROL_ADMIN_TOKEN: TOKEN,
      ...(HEAP_SAMPLE ? { HEAP_SAMPLE, HEAP_SAMPLE_SURVIVORS: process.env.HEAP_SAMPLE_SURVIVORS ?? '' } : {}),
      ...(PAIR_TRACE ? { PAIR_TRACE } : {}),
    },
    [...SERVICE_NODE_OPTIONS, ...extra],
  );
  const pid = svc.child.pid!;
  let gcs: Gc[] = [];
  let tail = '';
  let sampleWritten: () => void = () => undefined;
  svc.child.stdout!.on('data', (d: Buffer) => {
    const text = tail + d.toString();
    const lines = text.split('\n');
    tail = lines.pop()!;
    for (const l of lines) {
      const gc = parseGc(l);
      if (gc) gcs.push(gc);
      if (l.startsWith('heap sample written') || l.startsWith('pair trace written')) sampleWritten();
    }
  });
  try {
    const admin = new Api(svc.url, TOKEN);
    log('seeding as the benchmark does before scenario 10');
    const { crId } = await seedDetailScenario(admin);
    await seedReportScenario(admin);
    await seedConditionPolicies(admin);
    seedCommentThreads(dbFile, crId, 2000, 1);
    const url = `${svc.url}${CC}change-requests/${crId}/`;
    const readCpu: number[] = [];
    const times: Array<{ w0: number; w1: number; r0: number; r1: number; clientWait: number }> = [];
    const clientWait = (): number =>
      Number(readFileSync(`/proc/self/task/${process.pid}/schedstat`, 'latin1').split(' ')[1]) / 1e6;
    const pair = async (i: number): Promise<number> => {
      const w0 = monotonic();
      if ((await send(url, 'PATCH', { description: `note ${i}` })) !== 200) throw new Error('edit failed');
      const w1 = monotonic();
      const c0 = PAIR_TRACE ? 0 : cpuMs(pid);
      const t0 = performance.now();
      const cw0 = PAIR_TRACE ? clientWait() : 0;
      const r0 = monotonic();
      if ((await send(url, 'GET')) !== 200) throw new Error('read failed');
      const ms = performance.now() - t0;
      const r1 = monotonic();
      times.push({ w0, w1, r0, r1, clientWait: PAIR_TRACE ? clientWait() - cw0 : 0 });
      readCpu.push(PAIR_TRACE ? 0 : cpuMs(pid) - c0);
      return ms;
    };
    for (let i = 0; i < 200; i++) await pair(i);
    if (HEAP_SAMPLE || PAIR_TRACE) {
      const flushed = new Promise<void>((resolve) => (sampleWritten = resolve));
      svc.child.kill('SIGUSR2');
      if (PAIR_TRACE) await flushed;
    }
    times.length = 0;
    gcs = [];
    readCpu.length = 0;
    const cpu0 = cpuMs(pid);
    const ms: number[] = [];
    for (let i = 0; i < PAIRS; i++) ms.push(await pair(200 + i));
    const cpu = cpuMs(pid) - cpu0;
    const measured = gcs;
    if (HEAP_SAMPLE || PAIR_TRACE) {
      const written = new Promise<void>((resolve) => (sampleWritten = resolve));
      svc.child.kill('SIGUSR2');
      await written;
    }
    if (process.env.GC_LOG) writeFileSync(process.env.GC_LOG, measured.map((g) => g.line).join('\n'));
    const of = (kind: string) => measured.filter((g) => g.kind === kind);
    const pauses = (l: Gc[]) =>
      l.length
        ? `pauses total ${l.reduce((a, g) => a + g.pause, 0).toFixed(1)} ms, largest ${Math.max(...l.map((g) => g.pause)).toFixed(1)} ms`
        : 'none';
    const scavenges = of('s');
    const full = measured.filter((g) => g.kind !== 's' && g.kind !== 'mmc');
    const allocated = measured.reduce((a, g) => a + g.allocated, 0);
    const promoted = scavenges.reduce((a, g) => a + g.promoted, 0);
    console.log(`${PAIRS} write-then-read pairs (after 200 to warm up), 200 changes:`);
    console.log(
      `  reads: p50 ${percentile(ms, 50).toFixed(2)} ms, p99 ${percentile(ms, 99).toFixed(2)} ms, slowest ${Math.max(...ms).toFixed(2)} ms`,
    );
    console.log(
      `  service main thread CPU: ${(cpu / PAIRS).toFixed(2)} ms per pair; per read (what the read would take alone, collections included): p50 ${percentile(readCpu, 50).toFixed(2)} ms, p99 ${percentile(readCpu, 99).toFixed(2)} ms, largest ${Math.max(...readCpu).toFixed(2)} ms`,
    );
    console.log(`  scavenges: ${scavenges.length} (${pauses(scavenges)})`);
    console.log(`  mark-compacts: ${full.length} (${pauses(full)}) [${full.map((g) => g.kind).join(' ')}]`);
    console.log(
      `  allocated: ${(allocated / PAIRS / 1024).toFixed(0)} kB per pair (between collections in the window); promoted by scavenges: ${(promoted / PAIRS / 1024).toFixed(1)} kB per pair`,
    );
    if (HEAP_SAMPLE) summarise(JSON.parse(readFileSync(HEAP_SAMPLE, 'utf8')) as { head: ProfileNode }, PAIRS);
    if (PAIR_TRACE) explainSlowest(JSON.parse(readFileSync(PAIR_TRACE, 'utf8')) as PairTrace, times);
  } finally {
    await svc.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

void main();
