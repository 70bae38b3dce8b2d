import type { Host } from './host';
import { DEFAULT_CATALOGUE } from './objects/object-types';
import { registerEventRules } from './events/event-rules-routes';
import { registerNotifications } from './events/notifications-routes';
import { registerObjectChanges } from './events/object-changes-routes';
import { registerObjectTypes } from './objects/object-types-routes';
import { registerSchema } from './http/openapi';
import { registerApiRoot } from './http/api-root';
import { registerSearch } from './http/search-routes';
import { registerWebhookDelivery } from './events/webhook-delivery';
import { registerWebhooks } from './events/webhooks-routes';
import { registerStatus } from './http/status-routes';
import { registerGroups } from './users/groups-routes';
import { registerMe } from './users/me-routes';
import { registerPermissions } from './users/permissions-routes';
import { registerTokenProvisioning } from './users/provision-routes';
import { registerTokens } from './users/tokens-routes';
import { registerUsers } from './users/users-routes';
import { registerObjects } from './objects/routes';
import { registerTags } from './objects/tags-routes';

/** The object types of the host's own models (contract 3.2). */
const HOST_MODELS = [
  { appLabel: 'users', model: 'user', display: 'User' },
  { appLabel: 'users', model: 'group', display: 'Group' },
  { appLabel: 'users', model: 'token', display: 'Token' },
  { appLabel: 'users', model: 'objectpermission', display: 'Permission' },
  { appLabel: 'extras', model: 'webhook', display: 'Webhook' },
  { appLabel: 'extras', model: 'eventrule', display: 'Event rule' },
  { appLabel: 'extras', model: 'tag', display: 'Tag' },
  { appLabel: 'core', model: 'objectchange', display: 'Object change' },
];

/** Registers everything the host itself provides (everything that is not a plugin). */
export function registerHostCore(host: Host): void {
  for (const def of DEFAULT_CATALOGUE) host.objectTypes.register(def);
  for (const def of HOST_MODELS) host.objectTypes.register(def);
  registerStatus(host);
  registerTags(host);
  registerUsers(host);
  registerMe(host);
  registerGroups(host);
  registerTokenProvisioning(host);
  registerTokens(host);
  registerPermissions(host);
  registerObjectTypes(host);
  registerObjects(host);
  registerObjectChanges(host);
  registerWebhooks(host);
  registerEventRules(host);
  registerNotifications(host);
  registerSearch(host);
  registerSchema(host);
  registerApiRoot(host);
  registerWebhookDelivery(host);
}
