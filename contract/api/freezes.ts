import * as z from 'zod';
import { briefFields, instant, objectBase, requiredText, text } from './common';

/**
 * Freeze calendars and the merge queue: what blocks merging for a while (a named freeze,
 * one-off or recurring in a time zone, global or per policy) and the order in which ready
 * requests set to merge automatically go.
 */

export const FREEZE_KINDS = ['once', 'recurring'] as const;
export type FreezeKind = (typeof FREEZE_KINDS)[number];

/** ISO weekdays: 1 is Monday, 7 is Sunday. */
export const weekday = z.number().int().min(1).max(7);

/** `HH:MM`, 24-hour, 00:00 to 23:59. */
export const timeOfDay = z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$/, { error: 'must be "HH:MM" (00:00 to 23:59)' });

/** Whether the runtime knows this IANA time zone. */
export function isTimeZone(name: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

const timeZone = z
  .string()
  .trim()
  .min(1)
  .max(100)
  .refine(isTimeZone, { error: 'unknown time zone (use an IANA name such as "Europe/Berlin" or "UTC")' });

const isoDateTime = z.iso.datetime({ offset: true, error: 'must be an ISO 8601 date-time' });

/** One stretch of a freeze: when it starts and ends (ISO, UTC). */
export const freezePeriod = z.object({ start: instant, end: instant });
export type FreezePeriod = z.infer<typeof freezePeriod>;

export const freeze = z.object({
  ...objectBase,
  name: z.string(),
  description: z.string(),
  enabled: z.boolean(),
  kind: z.enum(FREEZE_KINDS),
  /** A one-off freeze: its start and end (ISO); null for a recurring one. */
  start: instant.nullable(),
  end: instant.nullable(),
  /** A recurring freeze: the ISO weekdays it starts on, and its daily time range in `time_zone` (an end not after the start ends the next day). */
  weekdays: z.array(weekday),
  start_time: z.string().nullable(),
  end_time: z.string().nullable(),
  time_zone: z.string(),
  /** The policy whose requests it freezes; null: every request (a global freeze). */
  policy: z.number().int().nullable(),
  /** Read-only, computed at the time of asking: the period in force now, or null. */
  active: freezePeriod.nullable(),
  /** Read-only: the next period that starts after now, or null. */
  next: freezePeriod.nullable(),
});
export type Freeze = z.infer<typeof freeze>;

const freezeFields = {
  name: requiredText('This field may not be blank.', 100),
  description: text().optional(),
  enabled: z.boolean().optional(),
  kind: z.enum(FREEZE_KINDS).optional(),
  start: isoDateTime.nullable().optional(),
  end: isoDateTime.nullable().optional(),
  weekdays: z.array(weekday).max(7).optional(),
  start_time: timeOfDay.nullable().optional(),
  end_time: timeOfDay.nullable().optional(),
  time_zone: timeZone.optional(),
  policy: z.number().int().nullable().optional(),
};
export const freezeWrite = z.strictObject(freezeFields);

/** A freeze as a change request shows it: one that applies to it, in force now or starting soon. */
export const freezeNotice = z.object({
  id: z.number().int(),
  name: z.string(),
  /** True: in force now (it blocks merging); false: it starts at `start`. */
  active: z.boolean(),
  start: instant,
  end: instant,
  /** Its rule, for a reader to say it as written ("every Monday 08:00–12:00 New York time"): a one-off freeze or a recurring one. */
  kind: z.enum(FREEZE_KINDS).default('once'),
  /** A recurring freeze's ISO weekdays, wall-clock times and IANA time zone; empty and null for a one-off freeze. */
  weekdays: z.array(weekday).default([]),
  start_time: z.string().nullable().default(null),
  end_time: z.string().nullable().default(null),
  time_zone: z.string().default('UTC'),
});
export type FreezeNotice = z.infer<typeof freezeNotice>;

/** One entry of the merge queue (`merge-queue/`): the change request (`id`, `url`, `display`) and its place. */
export const mergeQueueEntry = z.object({
  ...briefFields,
  /** 1 is the head (merging now or next). Positions count every queued request, also those the caller cannot see. */
  position: z.number().int(),
  branch: z.number().int(),
  /** `running`: being re-validated and merged now; `pending`: waiting. */
  state: z.enum(['pending', 'running']),
  queued: z.string(),
  /** A freeze in force holds it: the queue leaves it in its place and merges it once the freeze ends (null: nothing holds it). */
  waiting_for_freeze: z.object({ id: z.number().int(), name: z.string(), end: instant }).nullable().default(null),
});
export type MergeQueueEntry = z.infer<typeof mergeQueueEntry>;
