// Preloaded into the service (`--require bench/pair-trace.cjs`) by bench/gc-pairs.ts when
// PAIR_TRACE is set: records, on the monotonic clock every process of the machine shares
// (process.hrtime), each garbage collection (kind, start, duration), each HTTP request's arrival
// (its `request` event) and the end of its answer (`res.end` returned), with the main thread's
// time on a core and waiting for one at each, when the service's loop next ran an
// immediate and a timer after that answer (what work queued behind the answer held it), and each message to and
// from the checkpointer thread. SIGUSR2 writes them to PAIR_TRACE as JSON (and starts afresh), and so does the exit (if a request came since).
const { PerformanceObserver, performance } = require('node:perf_hooks');
const http = require('node:http');
const { Worker } = require('node:worker_threads');
const { readFileSync, writeFileSync } = require('node:fs');

// `%p` in the name is replaced by the process id (BENCH_NODE_ARGS reaches every process the benchmark starts).
const file = process.env.PAIR_TRACE && process.env.PAIR_TRACE.replace('%p', String(process.pid));
if (file) {
  const monotonic = () => Number(process.hrtime.bigint()) / 1e6;
  // The main thread's time on a core and its time waiting for one (runnable, not running), in ms.
  const schedstat = `/proc/self/task/${process.pid}/schedstat`;
  const sched = () => {
    const [run, wait] = readFileSync(schedstat, 'latin1').split(' ');
    return [Number(run) / 1e6, Number(wait) / 1e6];
  };
  // performance.now() and process.hrtime() run on the same clock: the offset between them is fixed.
  const offset = monotonic() - performance.now();
  let trace = { gcs: [], requests: [], worker: [] };
  new PerformanceObserver((list) => {
    for (const e of list.getEntries())
      trace.gcs.push({ kind: e.detail ? e.detail.kind : e.kind, start: e.startTime + offset, ms: e.duration });
  }).observe({ entryTypes: ['gc'] });
  const emit = http.Server.prototype.emit;
  http.Server.prototype.emit = function (event, req, res) {
    if (event === 'request') {
      const entry = {
        method: req.method,
        arrived: monotonic(),
        schedArrived: sched(),
        finished: 0,
        schedFinished: [0, 0],
        nextImmediate: 0,
        nextTimer: 0,
      };
      trace.requests.push(entry);
      const end = res.end;
      res.end = function () {
        const result = end.apply(this, arguments);
        entry.finished = monotonic();
        entry.schedFinished = sched();
        setImmediate(() => (entry.nextImmediate = monotonic()));
        setTimeout(() => (entry.nextTimer = monotonic()), 0);
        return result;
      };
    }
    return emit.apply(this, arguments);
  };
  const post = Worker.prototype.postMessage;
  Worker.prototype.postMessage = function (message) {
    trace.worker.push({ at: monotonic(), sent: String(message) });
    if (!this.__traced) {
      this.__traced = true;
      this.on('message', (m) =>
        trace.worker.push({ at: monotonic(), received: typeof m === 'string' ? m : JSON.stringify(m) }),
      );
    }
    return post.apply(this, arguments);
  };
  // Also written when the service exits (a benchmark run that never signals it).
  process.on('exit', () => {
    if (trace.requests.length > 0) writeFileSync(file, JSON.stringify(trace));
  });
  process.on('SIGUSR2', () => {
    writeFileSync(file, JSON.stringify(trace));
    trace = { gcs: [], requests: [], worker: [] };
    process.stdout.write(`pair trace written to ${file}\n`);
  });
}
