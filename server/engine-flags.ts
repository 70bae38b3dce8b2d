import { setFlagsFromString } from 'node:v8';

/**
 * How far the JavaScript heap may grow past what the last full garbage collection kept, in
 * percent. V8's own factor lets it reach up to four times that before collecting again: the
 * service keeps about 30 MB between requests, but its memory stood at 250 to 300 MB after a
 * few minutes of load, all of it garbage waiting. At 50 % it stays within about 100 MB more
 * than it keeps, for the same throughput (the collections are smaller and incremental). 30 %
 * measured about 10 MB less after the list scenarios, but the detail read at 16 connections
 * made 3,300 to 3,500 req/s against 4,000 to 4,250 (docs/performance.md, "Scenario 13: 4 MB
 * semi-spaces"): not taken.
 */
export const HEAP_GROWING_PERCENT = 50;

/**
 * The engine's flags the service sets for itself when it starts, less those Node was given
 * (`given`: its command line and NODE_OPTIONS), which win:
 * - the heap's growth (`HEAP_GROWING_PERCENT`);
 * - no young-generation collection scheduled as a task of its own (`--no-minor-gc-task`). V8
 *   otherwise posts one once the young generation is 80 % full, and it runs as soon as the
 *   request that crossed the line has answered: in front of the next request, typically a light
 *   read after a write (the writes allocate most). Without it, the collection runs when the young
 *   generation is full, inside the request whose allocation fills it, so a request's share of
 *   the collections follows its share of the allocations, and there are about 10 % fewer of
 *   them (docs/performance.md, "The first read after a write").
 */
export function engineFlags(given: readonly string[]): string[] {
  const has = (pattern: RegExp) => given.some((a) => pattern.test(a));
  const flags: string[] = [];
  if (!has(/^--heap[-_]growing[-_]percent\b/)) flags.push(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
  if (!has(/^--(no-)?(minor[-_]gc|scavenge)[-_]task\b/)) flags.push('--no-minor-gc-task');
  return flags;
}

/** Sets `engineFlags` for this process (before anything else runs: they apply from then on). */
export function setEngineFlags(): void {
  for (const flag of engineFlags([...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)]))
    setFlagsFromString(flag);
}
