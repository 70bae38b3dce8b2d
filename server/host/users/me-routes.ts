import type { Host } from '../host';
import { AuthenticationFailed } from '../core/errors';
import { currentUser } from '../../../contract/api/host';
import { getUser } from './users-routes';

/** `GET /api/users/me/`: the caller as a user object. */
export function registerMe(host: Host): void {
  host.routes.add({
    method: 'GET',
    path: '/api/users/me/',
    access: { authenticated: true },
    summary: 'The calling user',
    tag: 'users',
    response: currentUser,
    handler: async ({ ctx }) => {
      const me = ctx.user ? await getUser(ctx, ctx.user.id) : undefined;
      if (!me) throw new AuthenticationFailed('Authentication credentials were not provided.');
      return me;
    },
  });
}
