import { serviceStatus } from '../../../contract/api/host';
import type { Host } from '../host';
import { HOST_VERSION } from '../core/version';

export function registerStatus(host: Host): void {
  host.routes.add({
    method: 'GET',
    path: '/api/status/',
    access: { public: true },
    summary: 'Host and plugin versions',
    tag: 'status',
    response: serviceStatus,
    handler: async () => ({ 'host-version': HOST_VERSION, plugins: Object.fromEntries(host.plugins) }),
  });
}
