// Scenario 9's requests measured by what the machine's load distorts least: the service's main
// thread CPU time per request (/proc/PID/task/PID/schedstat), and its whole process's (user and
// system time from /proc/PID/stat).
//   node esbuild.config.mjs server && npx tsx bench/mix-cpu.ts
// First each kind alone, one connection, one request after another (a read after a write is
// timed with its write, per request: twice `check report + detail` less `check report` is what
// the detail read costs when the write made it compute afresh); then the mix of scenario 9 (7 reads, 2 check
// reports, 1 review edit or comment in 10) over 16 connections. MIX_CPU_REQUESTS (default
// 3,000) requests per measurement, after 300 to warm up. Seeded as scenario 9 is in the full
// benchmark (scenarios 1, 3, 4 and 5). BENCH_NODE_ARGS adds Node options to the service's.
// MIX_CPU_ONLY=mix (or a kind's name as printed, comma-separated) measures only those, so that a
// profile (BENCH_NODE_ARGS="--cpu-prof --cpu-prof-dir=DIR") shows little else than them.
// MIX_CPU_RUNS (default 1) measures the mix that many times (alternate builds run this way on a
// loaded machine). MIX_CPU_GC=1 runs the service with --trace-gc-nvp and prints beside each
// figure the bytes its collections found allocated per request (summed over the collections
// within the measurement: the allocation rate, which the machine's load does not distort).
// HEAP_SAMPLE=file.json samples every allocation of the first measurement (bench/heap-sample.cjs;
// with MIX_CPU_ONLY naming one kind) and writes V8's profile there.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Api, CC } from './api';
import { seedCommentThreads, seedConditionPolicies, seedDetailScenario, seedReportScenario } from './seed';
import { startService } from './service';

const TOKEN = 'bench0000000000000000000000000000000000';
const REQUESTS = Number(process.env.MIX_CPU_REQUESTS ?? 3000);
const ONLY = process.env.MIX_CPU_ONLY?.split(',').map((name) => name.trim());
const wanted = (name: string): boolean => ONLY === undefined || ONLY.includes(name);
const agent = new Agent({ keepAlive: true, maxSockets: 16 });

interface Call {
  method: string;
  path: string;
  token?: string;
  body?: unknown;
}

function send(base: string, call: Call): Promise<number> {
  return new Promise((resolve, reject) => {
    const payload = call.body === undefined ? undefined : JSON.stringify(call.body);
    const headers: Record<string, string> = {
      Authorization: `Token ${call.token ?? TOKEN}`,
      Accept: 'application/json',
    };
    if (payload !== undefined) headers['Content-Type'] = 'application/json';
    const req = request(`${base}${call.path}`, { method: call.method, headers, agent }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end(payload);
  });
}

/** The main thread's CPU time and the whole process's, in milliseconds. */
function cpu(pid: number): { main: number; all: number } {
  const main = Number(readFileSync(`/proc/${pid}/task/${pid}/schedstat`, 'utf8').split(' ')[0]) / 1e6;
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return { main, all: ((Number(fields[11]) + Number(fields[12])) * 1000) / 100 };
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'cc-mix-cpu-'));
  const dbFile = join(dir, 'bench.sqlite3');
  const config = join(dir, 'config.json');
  writeFileSync(
    config,
    JSON.stringify({
      change_control: { required_external_checks: [['ci/build', 'CI build'], 'ci/lint'], enable_auto_merge: false },
    }),
  );
  const gcCounted = process.env.MIX_CPU_GC === '1';
  if (gcCounted) process.env.BENCH_NODE_ARGS = `${process.env.BENCH_NODE_ARGS ?? ''} --trace-gc-nvp`;
  let sampled = process.env.HEAP_SAMPLE === undefined;
  if (!sampled)
    process.env.BENCH_NODE_ARGS = `${process.env.BENCH_NODE_ARGS ?? ''} --require ${join(__dirname, 'heap-sample.cjs')}`;
  const svc = await startService(dbFile, config, TOKEN);
  let allocated = 0;
  let tail = '';
  if (gcCounted)
    svc.child.stdout!.on('data', (d: Buffer) => {
      const lines = (tail + d.toString()).split('\n');
      tail = lines.pop()!;
      for (const line of lines) allocated += Number(/(?:^|\s)allocated=(\d+)/.exec(line)?.[1] ?? 0);
    });
  const admin = new Api(svc.url, TOKEN);
  try {
    const { crId, commentReviews } = await seedDetailScenario(admin);
    const branch = (await admin.get(`${CC}change-requests/${crId}/`)).branch as number;
    const reportChecks = await seedReportScenario(admin);
    await seedConditionPolicies(admin);
    seedCommentThreads(dbFile, crId, 2000, 1);
    const anchor = (await admin.get(`/api/plugins/branching/changes/?branch_id=${branch}&limit=1`)).results[0]
      .id as number;
    const pid = svc.child.pid!;
    let n = 0;
    const detail = (): Call => ({ method: 'GET', path: `${CC}change-requests/${crId}/` });
    const list = (): Call => ({ method: 'GET', path: `${CC}change-requests/?limit=50` });
    const report = (): Call => ({
      method: 'PATCH',
      path: `${CC}checks/${reportChecks[n % reportChecks.length]}/`,
      body: { status: n % 2 ? 'success' : 'failure', summary: `run ${n}` },
    });
    const review = (): Call => ({
      method: 'PATCH',
      path: `${CC}reviews/${commentReviews[n % 3]!.id}/`,
      token: commentReviews[n % 3]!.token,
      body: { comment: `still looking ${n}` },
    });
    const comment = (): Call => ({
      method: 'POST',
      path: `${CC}change-comments/`,
      body: { change_request: crId, change_diff: anchor, text: `mixed ${n}` },
    });

    /** Main-thread and process CPU per request of `next` over `connections` loops. */
    async function measure(next: () => Call, connections: number): Promise<string> {
      const run = async (count: number): Promise<void> => {
        let sent = 0;
        await Promise.all(
          Array.from({ length: connections }, async () => {
            while (sent < count) {
              sent++;
              n++;
              const call = next();
              const status = await send(svc.url, call);
              if (status >= 300) throw new Error(`${call.method} ${call.path}: ${status}`);
            }
          }),
        );
      };
      await run(300);
      const before = cpu(pid);
      const allocatedBefore = allocated;
      const sampling = !sampled;
      if (sampling) process.kill(pid, 'SIGUSR2');
      await run(REQUESTS);
      const after = cpu(pid);
      if (sampling) {
        sampled = true;
        process.kill(pid, 'SIGUSR2');
        await new Promise((resolve) => setTimeout(resolve, 3000));
      }
      const bytes = gcCounted ? `, allocated ${((allocated - allocatedBefore) / REQUESTS / 1024).toFixed(1)} kB` : '';
      return `main thread ${((after.main - before.main) / REQUESTS).toFixed(3)} ms, process ${((after.all - before.all) / REQUESTS).toFixed(3)} ms${bytes}`;
    }
    const pairs: Array<[string, Array<() => Call>]> = [
      ['detail', [detail]],
      ['list', [list]],
      ['check report', [report]],
      ['review edit', [review]],
      ['comment', [comment]],
      ['check report + detail', [report, detail]],
      ['check report + list', [report, list]],
      ['review edit + detail', [review, detail]],
      ['comment + detail', [comment, detail]],
    ];
    for (const [name, calls] of pairs) {
      if (!wanted(name)) continue;
      let i = 0;
      console.log(`${name.padEnd(24)} ${await measure(() => calls[i++ % calls.length]!(), 1)} per request`);
    }
    const wheel: Array<() => Call> = [];
    let read = 0;
    let write = 0;
    for (let i = 0; i < 7; i++) wheel.push(() => (read++ % 2 ? detail() : list()));
    wheel.push(report, report, () => (write++ % 2 ? review() : comment()));
    let turn = 0;
    for (let run = wanted('mix') ? Number(process.env.MIX_CPU_RUNS ?? 1) : 0; run > 0; run--) {
      console.log(
        `${'mix, 16 connections'.padEnd(24)} ${await measure(() => wheel[turn++ % wheel.length]!(), 16)} per request`,
      );
    }
  } finally {
    await svc.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
