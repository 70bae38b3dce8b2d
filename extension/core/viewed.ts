// "Viewed" marks of changed objects, kept by the extension per service, user, request and object.
// Each mark holds a digest of the change it was set on (its original and modified state); when
// the change differs from that, the mark no longer holds and is dropped. No VS Code here.
import { createHash } from 'node:crypto';
import type { ChangeDiff } from '../../contract/api/branching';
import { objectKey } from './change-documents';

/** A JSON text of a value with object keys sorted at every level. */
export function stableJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`;
  const entries = Object.keys(value as Record<string, unknown>)
    .sort()
    .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
    .map((k) => `${JSON.stringify(k)}:${stableJson((value as Record<string, unknown>)[k])}`);
  return `{${entries.join(',')}}`;
}

const digests = new WeakMap<object, string>();

/** What a viewed mark is about: the change's action and both of its states (remembered per change object). */
export function changeDigest(change: Pick<ChangeDiff, 'action' | 'original' | 'modified'>): string {
  let digest = digests.get(change);
  if (digest === undefined) {
    digest = createHash('sha256')
      .update(stableJson({ action: change.action, original: change.original, modified: change.modified }))
      .digest('hex')
      .slice(0, 32);
    digests.set(change, digest);
  }
  return digest;
}

/** The marks of one request: object key → digest of the change when it was marked. */
export type ViewedMarks = Record<string, string>;

/** Where the marks of a service and user are kept (global state); the value holds every request's marks by id. */
export function viewedStorageKey(serviceUrl: string, userId: number): string {
  return `changeControl.viewed:${serviceUrl}:${userId}`;
}

export function isViewed(
  marks: ViewedMarks | undefined,
  change: Pick<ChangeDiff, 'object_type' | 'object_id' | 'action' | 'original' | 'modified'>,
): boolean {
  return marks?.[objectKey(change)] === changeDigest(change);
}

export function markViewed(
  marks: ViewedMarks | undefined,
  change: Pick<ChangeDiff, 'object_type' | 'object_id' | 'action' | 'original' | 'modified'>,
  viewed: boolean,
): ViewedMarks {
  const next = { ...(marks ?? {}) };
  if (viewed) next[objectKey(change)] = changeDigest(change);
  else delete next[objectKey(change)];
  return next;
}

/** The marks that still hold for these changes (a changed or vanished object loses its mark); `changed` says whether any was dropped. */
export function pruneViewed(
  marks: ViewedMarks | undefined,
  changes: readonly Pick<ChangeDiff, 'object_type' | 'object_id' | 'action' | 'original' | 'modified'>[],
): { marks: ViewedMarks; changed: boolean } {
  const current = new Map(changes.map((c) => [objectKey(c), changeDigest(c)]));
  const next: ViewedMarks = {};
  let changed = false;
  for (const [key, digest] of Object.entries(marks ?? {})) {
    if (current.get(key) === digest) next[key] = digest;
    else changed = true;
  }
  return { marks: next, changed };
}
