/** The host version this service implements, and the version rules plugins are checked against. */
export const HOST_VERSION = '4.7.0';
export const API_VERSION = '4.7';

export interface VersionRange {
  min: string;
  max: string;
}

function parts(v: string): number[] {
  return v.split('.').map((p) => Number.parseInt(p, 10) || 0);
}

export function compareVersions(a: string, b: string): number {
  const pa = parts(a);
  const pb = parts(b);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

export function inRange(version: string, range: VersionRange): boolean {
  return compareVersions(version, range.min) >= 0 && compareVersions(version, range.max) <= 0;
}

/** `requires: '1.2'` accepts any 1.2.x. */
export function satisfiesRequirement(version: string, required: string): boolean {
  const want = parts(required);
  const have = parts(version);
  return want.every((n, i) => have[i] === n);
}
