// How the service is launched, wherever it runs: `npm start` (package.json), the extension's
// bundled service, the benchmarks, and the deploy examples and docs, which repeat these words
// (test/conventions/service-launch.test.ts holds them to this list). The service sets no engine
// flag itself: both are fixed when the process starts. Each is kept because it measured more
// than a tenth less resident memory under load (docs/performance.md, "Launch flags").
//
// `--max-semi-space-size=4`: V8's young generation in 4 MB semi-spaces instead of 16 MB.
// `--heap-growing-percent=50`: the heap may grow half past what the last full collection kept
// before the next, instead of V8's own larger factor, so garbage does not pile up under load.
export const SERVICE_NODE_OPTIONS: readonly string[] = ['--max-semi-space-size=4', '--heap-growing-percent=50'];

// `MALLOC_MMAP_THRESHOLD_=131072`: the GNU C library gives every allocation of 128 kB or more a
// mapping of its own, returned to the system when freed, instead of raising that threshold after
// the first large block freed (a password hash's) and keeping such blocks in its heaps for good.
// Other C libraries ignore the variable.
export const SERVICE_ENVIRONMENT: Readonly<Record<string, string>> = { MALLOC_MMAP_THRESHOLD_: '131072' };

/** The service's environment as a shell says it before a command: `NAME=value …`. */
export function serviceEnvironmentWords(): string {
  return Object.entries(SERVICE_ENVIRONMENT)
    .map(([name, value]) => `${name}=${value}`)
    .join(' ');
}
