// How Node is started for the service, wherever it runs: `npm start` (package.json), the
// extension's bundled service, the benchmark, and the deploy examples and README, which repeat
// these words (a test holds them to this list).
//
// `--max-semi-space-size=4`: V8's young generation is two semi-spaces of 16 MB each by default
// on 64-bit machines, committed once in use; 4 MB each keeps it at 8 MB (about 24 MB less
// resident memory under load than the default, 8 MB less than 8 MB semi-spaces) for the same
// CPU time per request: twice the young collections, each about half as long, and no more
// full collections under the mixed load. 2 MB cost 7 to 11 % more CPU per request and
// `--optimize-for-size` (which caps them at 1 MB) 8 to 30 % (docs/performance.md). Its size is
// fixed when Node starts: setting the flag from inside the running service does not change it.
export const SERVICE_NODE_OPTIONS: readonly string[] = ['--max-semi-space-size=4'];

// The service's environment, set wherever it is started, beside the Node options above (the C
// library reads it once, when the process starts: the service cannot set it for itself).
//
// `MALLOC_MMAP_THRESHOLD_=131072`: the GNU C library gives every allocation of 128 kB or more a
// mapping of its own, returned to the system when freed. Left to itself, glibc raises that
// threshold to the size of the largest such block freed so far (up to 32 MB) and only hands back
// free memory at the top of a heap above twice it: after one password hash (scrypt works in
// 16 MB) every later 16 MB block stays in the heap of the thread that hashed, about 45 MB held for
// good after a few sign-ins, and the main heap keeps up to 32 MB it no longer uses. A fixed
// threshold keeps glibc's starting behaviour for the life of the service (docs/performance.md).
// Other C libraries (macOS, Windows, musl) ignore the variable.
export const SERVICE_ENVIRONMENT: Readonly<Record<string, string>> = { MALLOC_MMAP_THRESHOLD_: '131072' };

/** The service's environment as a shell says it before a command: `NAME=value …`. */
export function serviceEnvironmentWords(): string {
  return Object.entries(SERVICE_ENVIRONMENT)
    .map(([name, value]) => `${name}=${value}`)
    .join(' ');
}
