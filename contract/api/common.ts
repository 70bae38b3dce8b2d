import * as z from 'zod';

/** An instant as the service answers it: ISO 8601 text in UTC (`2026-11-01T09:00:00.000Z`). */
export const instant = z.string();

/** What every object answers about itself: its id, URL and display text (the brief form). */
export const briefFields = {
  id: z.number().int(),
  url: z.string(),
  display: z.string(),
};

/** Fields every object of the API carries. */
export const objectBase = {
  ...briefFields,
  created: instant,
  last_updated: instant,
};

/** A user as embedded in other objects (reviewer, author, requester). */
export const userRef = z.object({
  id: z.number().int(),
  username: z.string(),
  display: z.string(),
});
export type UserRef = z.infer<typeof userRef>;

/** The list envelope of every list endpoint. */
export function listOf<T extends z.ZodType>(item: T) {
  return z.object({
    count: z.number().int(),
    next: z.string().nullable(),
    previous: z.string().nullable(),
    results: z.array(item),
  });
}
export type List<T> = { count: number; next: string | null; previous: string | null; results: T[] };

/** Error bodies: `{detail}` or field errors `{field: [messages]}`. */
export const errorBody = z.union([z.object({ detail: z.string() }), z.record(z.string(), z.array(z.string()))]);

/** `"app_label.model"` */
export const objectTypeName = z.string().regex(/^[a-z_][a-z0-9_]*\.[a-z_][a-z0-9_]*$/, {
  error: 'must be "app_label.model"',
});

export const MAX_TEXT = 65_536;
export const text = (max = MAX_TEXT) => z.string().max(max, { error: `at most ${max} characters` });

/**
 * Characters that show: anything but white space, control and format characters (zero-width
 * spaces and joiners among them), combining marks on their own, and the filler letters that
 * draw nothing (Hangul fillers, the blank Braille pattern).
 */
const VISIBLE = /[^\p{White_Space}\p{Cc}\p{Cf}\p{M}\p{Z}\u115F\u1160\u3164\uFFA0\u2800]/u;

/** Whether text holds at least one visible character (required text: reasons, comments, names). */
export function hasVisibleText(value: string): boolean {
  return VISIBLE.test(value);
}

/** Required text: trimmed, with at least one visible character (otherwise `error`, naming the field). */
export const requiredText = (error = 'This field may not be blank.', max = MAX_TEXT) =>
  text(max).trim().refine(hasVisibleText, { error });

/** Characters `custom_fields` may take, written as JSON (the limit of a text field). */
export const MAX_CUSTOM_FIELDS = MAX_TEXT;
/** NetBox's `custom_fields` as shown: a free-form JSON object (`{}` when none were written). */
export const customFields = z
  .record(z.string(), z.unknown())
  .describe('Free-form JSON object (NetBox custom_fields); {} when none were written.');
/** `custom_fields` as written: a JSON object; a write replaces the whole object. */
export const customFieldsWrite = z
  .record(z.string(), z.unknown(), { error: 'must be a JSON object' })
  .refine((v) => JSON.stringify(v).length <= MAX_CUSTOM_FIELDS, {
    error: `at most ${MAX_CUSTOM_FIELDS} characters as JSON`,
  })
  .describe(
    `Free-form JSON object (at most ${MAX_CUSTOM_FIELDS} characters as JSON); replaces the stored object whole.`,
  );

/** Whether `value` is an absolute `http:` or `https:` URL with a host (nothing else is ever stored as a link). */
export function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
  } catch {
    return false;
  }
}

/** A URL field: an absolute `http://` or `https://` URL (no `javascript:`, `data:` or relative links). */
export const httpUrl = (max: number) =>
  z
    .string()
    .max(max, { error: `at most ${max} characters` })
    .refine(isHttpUrl, { error: 'Enter an absolute http:// or https:// URL.' });
