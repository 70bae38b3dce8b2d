import type { Host } from './core/host';
import { DEFAULT_CATALOGUE } from './core/object-types';
import { registerStatus } from './extras/status';
import { registerGroups } from './users/groups';

/** The object types of the host's own models (contract 3.2). */
const HOST_MODELS = [
  { appLabel: 'users', model: 'user', display: 'User' },
  { appLabel: 'users', model: 'group', display: 'Group' },
  { appLabel: 'users', model: 'token', display: 'Token' },
  { appLabel: 'users', model: 'objectpermission', display: 'Permission' },
  { appLabel: 'extras', model: 'webhook', display: 'Webhook' },
  { appLabel: 'extras', model: 'eventrule', display: 'Event rule' },
];

/** Registers everything the host itself provides (everything that is not a plugin). */
export function registerHostCore(host: Host): void {
  for (const def of DEFAULT_CATALOGUE) host.objectTypes.register(def);
  for (const def of HOST_MODELS) host.objectTypes.register(def);
  registerStatus(host);
  registerGroups(host);
}
