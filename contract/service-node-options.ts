// How Node is started for the service, wherever it runs: `npm start` (package.json), the
// extension's bundled service, the benchmark, and the deploy examples and README, which repeat
// these words (a test holds them to this list).
//
// `--max-semi-space-size=8`: V8's young generation is two semi-spaces of 16 MB each by default
// on 64-bit machines, committed once in use; 8 MB halves it (about 16 MB less resident memory
// under load) for the same throughput (docs/performance.md). Its size is fixed when Node starts:
// setting the flag from inside the running service does not change it.
export const SERVICE_NODE_OPTIONS: readonly string[] = ['--max-semi-space-size=8'];
