// Responses of the host endpoints the extension reads that server/contract does not cover yet
// (the signed-in user, provisioned tokens, notifications, search). Only the fields the extension
// uses are required; anything else the service sends is kept but not relied on.
import { z } from 'zod';

/** `GET /api/users/me/` */
export const currentUser = z.looseObject({
  id: z.number().int(),
  username: z.string(),
  display: z.string(),
  is_superuser: z.boolean(),
});
export type CurrentUser = z.infer<typeof currentUser>;

/** `POST /api/users/tokens/provision/`: the key is in the answer this once. */
export const provisionedToken = z.looseObject({
  id: z.number().int(),
  user: z.number().int(),
  key: z.string().min(1),
});

/** `/api/extras/notifications/` */
export const notification = z.looseObject({
  id: z.number().int(),
  object_type: z.string(),
  object_id: z.number().int(),
  object_repr: z.string(),
  event_type: z.string(),
  created: z.string(),
  read: z.boolean(),
});
export type Notification = z.infer<typeof notification>;

/** `/api/search/?q=` */
export const searchResults = z.looseObject({
  results: z.array(
    z.looseObject({
      object_type: z.string(),
      id: z.number().int(),
      display: z.string(),
      url: z.string(),
      field: z.string(),
      value: z.string(),
    }),
  ),
});
export type SearchResult = z.infer<typeof searchResults>['results'][number];

/** `GET /api/status/` (no token needed). */
export const serviceStatus = z.looseObject({
  'host-version': z.string(),
  plugins: z.record(z.string(), z.string()),
});
