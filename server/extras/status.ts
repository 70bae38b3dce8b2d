import { z } from 'zod';
import type { Host } from '../core/host';
import { HOST_VERSION } from '../core/version';

export const statusOutput = z.object({
  'host-version': z.string(),
  plugins: z.record(z.string(), z.string()),
});

export function registerStatus(host: Host): void {
  host.routes.add({
    method: 'GET',
    path: '/api/status/',
    access: { public: true },
    summary: 'Host and plugin versions',
    tag: 'status',
    response: statusOutput,
    handler: async () => ({ 'host-version': HOST_VERSION, plugins: Object.fromEntries(host.plugins) }),
  });
}
