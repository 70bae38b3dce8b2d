// Responses of the host endpoints that clients read besides change control: the calling user,
// tokens (the provisioning answer among them), notifications, search and the service status.
// The service documents its routes with these schemas (the OpenAPI document at /api/schema/ is
// generated from them) and the extension parses the answers with the same ones.
import * as z from 'zod';
import { briefFields, customFieldsWrite, instant, objectBase } from './common';

// ---- Users and tokens (`/api/users/`) ------------------------------------------------------

/** A user as `users/` and `users/me/` show it (the password is write-only and never shown). */
export const user = z.object({
  ...objectBase,
  username: z.string(),
  first_name: z.string(),
  last_name: z.string(),
  email: z.string(),
  is_superuser: z.boolean(),
  is_active: z.boolean(),
  groups: z.array(z.number().int()),
});
export type User = z.infer<typeof user>;

/** `GET /api/users/me/`: the calling user. */
export const currentUser = user;
export type CurrentUser = User;

/** A token as `tokens/` shows it; `key` only in the answer that created it. */
export const token = z.object({
  ...objectBase,
  user: z.number().int(),
  /** Present only in the answer that created the token. */
  key: z.string().optional(),
  write_enabled: z.boolean(),
  expires: instant.nullable(),
  description: z.string(),
  last_used: instant.nullable(),
});
export type Token = z.infer<typeof token>;

/** `POST /api/users/tokens/provision/`: a new token whose key is in the answer, this once. */
export const provisionedToken = token.extend({
  key: z.string().min(1).describe('The new key, shown only in this answer.'),
});
export type ProvisionedToken = z.infer<typeof provisionedToken>;

// ---- Notifications (`/api/extras/notifications/`) -----------------------------------------

/** One of the caller's own notifications. */
export const notification = z.object({
  ...briefFields,
  object_type: z.string(),
  object_id: z.number().int(),
  object_repr: z.string(),
  event_type: z.string(),
  created: instant,
  read: z.boolean(),
});
export type Notification = z.infer<typeof notification>;

// ---- Search (`/api/search/?q=`) -----------------------------------------------------------

export const searchHit = z.object({
  object_type: z.string(),
  id: z.number().int(),
  display: z.string(),
  url: z.string(),
  field: z.string().describe('The field that matched.'),
  value: z.string().describe('Its value.'),
});
export type SearchHit = z.infer<typeof searchHit>;

export const searchResults = z.object({
  results: z.array(searchHit),
  /** True when more results matched than the answer holds (raise `limit` or narrow `q`). */
  truncated: z.boolean().default(false),
});
export type SearchResults = z.infer<typeof searchResults>;

// ---- Status (`/api/status/`, no token needed) ----------------------------------------------

export const serviceStatus = z.object({
  'host-version': z.string(),
  plugins: z.record(z.string(), z.string()),
});
export type ServiceStatus = z.infer<typeof serviceStatus>;

/** A tag (`/api/extras/tags/`). */
export const tag = z.object({
  ...briefFields,
  name: z.string(),
  slug: z.string(),
  color: z.string().describe('RGB hex, six digits, no #.'),
  description: z.string(),
  created: instant,
  last_updated: instant,
});
export type Tag = z.infer<typeof tag>;

export const tagWrite = z.strictObject({
  name: z.string().trim().min(1).max(100),
  slug: z
    .string()
    .trim()
    .min(1)
    .max(100)
    .regex(/^[-a-zA-Z0-9_]+$/, { error: 'Letters, digits, - and _ only.' }),
  color: z
    .string()
    .regex(/^[0-9a-fA-F]{6}$/, { error: 'Six hex digits (RGB), no #.' })
    .transform((c) => c.toLowerCase())
    .optional(),
  description: z.string().max(200).optional(),
});

/** A tag as a tagged object shows it. */
export const tagRef = z.object({
  id: z.number().int(),
  url: z.string(),
  display: z.string(),
  name: z.string(),
  slug: z.string(),
  color: z.string(),
});
export type TagRef = z.infer<typeof tagRef>;

/** How a write names its tags: ids, names, or {id}, {name}, {slug}; the list replaces the object's tags. */
export const tagsWrite = z
  .array(
    z.union([
      z.number().int(),
      z.string().min(1),
      z.strictObject({ id: z.number().int() }),
      z.strictObject({ name: z.string().min(1) }),
      z.strictObject({ slug: z.string().min(1) }),
    ]),
  )
  .max(100);

/** What every write of a tagged object may also give: its tags and its custom fields (each replaces the stored whole). */
export const extrasWrite = {
  tags: tagsWrite.optional(),
  custom_fields: customFieldsWrite.optional(),
};
