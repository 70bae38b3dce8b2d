/**
 * The nearest-rank percentile: the smallest value at or below which at least `p` % of the values
 * lie (index ceil(n·p/100) − 1 of the sorted values). The p99 of 1,000 values is the 990th
 * smallest (ten are above it); of 100 values, the 99th (only the slowest is above it).
 */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return 0;
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((s.length * p) / 100) - 1))]!;
}
