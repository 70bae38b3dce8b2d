// The service's memory after scenario 13's 20,000-request scenarios (2, 2b, 8), without the
// rest of the benchmark: seeds 20,000 requests, drives the same reads and writes, and prints the
// service's RSS and its parts from /proc.
//   node esbuild.config.mjs server && npx tsx bench/memory.ts
// BENCH_NODE_ARGS adds Node options after the service's own (bench/service.ts); MEMORY_CONFIG is
// JSON merged into the service's configuration, e.g. {"host":{"read_cache_entries":64}}. MEMORY_IDLE_S
// (default 25, 0 for none) also prints the figures after that many seconds without a request.
import autocannon from 'autocannon';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Api, CC } from './api';
import { RARE_TYPE, seedManyRequests } from './seed';
import { startService } from './service';

const TOKEN = 'bench0000000000000000000000000000000000';
const DURATION = Number(process.env.BENCH_DURATION ?? 10);
const log = (m: string) => process.stderr.write(`[memory] ${m}\n`);

function status(pid: number): string {
  const s = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (k: string) => Number(new RegExp(`${k}:\\s+(\\d+)`).exec(s)![1]) / 1024;
  // The C library's main heap (the program break), where SQLite's pages and most of Node's own allocations live.
  const brk = /\[heap\]\n(?:(?!^[0-9a-f]+-)[^\n]*\n)*?Rss:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/smaps`, 'utf8'));
  return `RSS ${kb('VmRSS').toFixed(0)} MB (anonymous ${kb('RssAnon').toFixed(0)}, of it the C main heap ${brk ? (Number(brk[1]) / 1024).toFixed(0) : 0}; files ${kb('RssFile').toFixed(0)}), peak ${kb('VmHWM').toFixed(0)} MB, threads ${/Threads:\s+(\d+)/.exec(s)![1]}`;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'cc-memory-'));
  const dbFile = join(dir, 'bench.sqlite3');
  const config = join(dir, 'config.json');
  writeFileSync(
    config,
    JSON.stringify({
      change_control: { required_external_checks: [['ci/build', 'CI build'], 'ci/lint'], enable_auto_merge: false },
      ...JSON.parse(process.env.MEMORY_CONFIG ?? '{}'),
    }),
  );
  const svc = await startService(dbFile, config, TOKEN);
  const pid = svc.child.pid!;
  const admin = new Api(svc.url, TOKEN);
  const headers = { Authorization: `Token ${TOKEN}` };
  try {
    log(`started: ${status(pid)}`);
    seedManyRequests(dbFile, 20_000, 1);
    const listUrl = `${svc.url}${CC}change-requests/?gates_cleared=true&limit=50&offset=500`;
    await autocannon({ url: listUrl, connections: 4, duration: 2, headers });
    const list = await autocannon({ url: listUrl, connections: 16, duration: DURATION, headers });
    log(`2: ${list.requests.average.toFixed(0)} req/s, p50 ${list.latency.p50} ms; ${status(pid)}`);
    let offset = 0;
    const coldPages = {
      setupRequest: (req: autocannon.Request) => ({
        ...req,
        path: `${CC}change-requests/?gates_cleared=true&limit=50&offset=${offset++}`,
      }),
    };
    const cold = await autocannon({ url: svc.url, connections: 16, amount: 6600, headers, requests: [coldPages] });
    log(`2b: ${cold.requests.average.toFixed(0)} req/s, p50 ${cold.latency.p50} ms; ${status(pid)}`);
    for (let i = 0; i < 5; i++) {
      const p = await admin.post(`${CC}policies/`, { name: `bench-rare-${i}`, object_types: [RARE_TYPE] });
      await admin.patch(`${CC}policies/${p.id}/`, { conditions: { attr: 'vid', op: 'gte', value: 100 + i } });
      await admin.delete(`${CC}policies/${p.id}/?force=true`);
    }
    console.log(`after 2, 2b, 8: ${status(pid)}`);
    // The service gives memory back once idle (server/idle-memory.ts: within two of its 10 s looks).
    const idleS = Number(process.env.MEMORY_IDLE_S ?? 25);
    if (idleS > 0) {
      await new Promise((done) => setTimeout(done, idleS * 1000));
      console.log(`after ${idleS} s idle: ${status(pid)}`);
    }
  } finally {
    await svc.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

void main();
