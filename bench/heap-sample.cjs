// Preloaded into the service (`--require bench/heap-sample.cjs`) by bench/gc-pairs.ts when
// HEAP_SAMPLE is set: the first SIGUSR2 starts V8's sampling heap profiler, keeping the samples
// of objects collected since (so it shows every allocation, not only what survived); the second
// writes the profile to HEAP_SAMPLE and stops it. HEAP_SAMPLE_SURVIVORS=1 drops the samples of
// objects a scavenge collected: what is left is what reached the old generation (even if a full
// collection took it since), what was still live at the end, and what was young when a full
// collection ran (start the service with BENCH_NODE_ARGS=--initial-old-space-size=1500 so that
// hardly any runs while sampling).
const { Session } = require('node:inspector');
const { writeFileSync } = require('node:fs');

const file = process.env.HEAP_SAMPLE;
if (file) {
  const session = new Session();
  session.connect();
  let sampling = false;
  process.on('SIGUSR2', () => {
    if (!sampling) {
      sampling = true;
      session.post('HeapProfiler.startSampling', {
        samplingInterval: 4096,
        includeObjectsCollectedByMajorGC: true,
        includeObjectsCollectedByMinorGC: !process.env.HEAP_SAMPLE_SURVIVORS,
      });
      return;
    }
    session.post('HeapProfiler.stopSampling', (err, result) => {
      sampling = false;
      writeFileSync(file, JSON.stringify(err ? { error: String(err) } : result.profile));
      process.stdout.write(`heap sample written to ${file}\n`);
    });
  });
}
