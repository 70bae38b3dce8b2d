import assert from 'node:assert/strict';
import { parsePermissionName } from '../../../server/host/users/object-permissions';
import type { RouteDef } from '../../../server/host/http/routes';
import { eachTestService } from '../../support/service';

/** A concrete path for a route: every `:param` replaced with `value`. */
function concrete(route: RouteDef, value: string): string {
  return route.path.replace(/:(\w+)/g, value);
}

function describeRoute(route: RouteDef): string {
  return `${route.method} ${route.path}`;
}

function accessKinds(route: RouteDef): string[] {
  const access = route.access as Record<string, unknown> | undefined;
  if (!access || typeof access !== 'object') return [];
  return ['public', 'authenticated', 'permission'].filter((k) => k in access);
}

function matcher(path: string): RegExp {
  const escaped = path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/:(\w+)/g, '[^/]+');
  return new RegExp(`^${escaped.replace(/\/$/, '')}/?$`);
}

describe('conventions: the route table', () => {
  const svc = eachTestService();
  let routes: readonly RouteDef[];
  beforeEach(async () => {
    routes = svc.host.routes.all();
  });

  it('has every route declare exactly one access, with permissions on registered object types', () => {
    assert.ok(routes.length > 10, 'the route table is suspiciously small');
    const problems: string[] = [];
    for (const route of routes) {
      const kinds = accessKinds(route);
      if (kinds.length !== 1) {
        problems.push(
          `${describeRoute(route)} declares ${kinds.length === 0 ? 'no access' : `several accesses (${kinds.join(', ')})`}`,
        );
        continue;
      }
      const access = route.access as { public?: unknown; authenticated?: unknown; permission?: unknown };
      if (kinds[0] === 'public' && access.public !== true)
        problems.push(`${describeRoute(route)}: public must be true`);
      if (kinds[0] === 'authenticated' && access.authenticated !== true)
        problems.push(`${describeRoute(route)}: authenticated must be true`);
      if (kinds[0] === 'permission') {
        const name = String(access.permission);
        if (!/^[a-z][a-z0-9_]*\.[a-z][a-z0-9_]*_[a-z][a-z0-9]*$/.test(name)) {
          problems.push(`${describeRoute(route)}: "${name}" is not app_label.action_model`);
          continue;
        }
        const { objectType } = parsePermissionName(name);
        if (!svc.host.objectTypes.has(objectType)) {
          problems.push(
            `${describeRoute(route)}: "${name}" names object type ${objectType}, which is not registered (no permission could grant it)`,
          );
        }
      }
      if (typeof route.handler !== 'function') problems.push(`${describeRoute(route)} has no handler`);
    }
    assert.deepEqual(problems, []);
  });

  it('has no route hidden behind an earlier one with the same method', () => {
    const problems: string[] = [];
    routes.forEach((route, index) => {
      const sample = concrete(route, 'x1');
      const earlier = routes.slice(0, index).find((e) => e.method === route.method && matcher(e.path).test(sample));
      if (earlier) problems.push(`${describeRoute(route)} is unreachable: ${describeRoute(earlier)} answers first`);
    });
    assert.deepEqual(problems, []);
  });

  it('refuses every non-public route without a token, and with an unknown token (403 with detail)', async () => {
    const unknown = svc.as('0'.repeat(40)).fromManyAddresses();
    const problems: string[] = [];
    for (const route of routes) {
      if ('public' in route.access) continue;
      const path = concrete(route, '1');
      for (const [who, client] of [
        ['no token', svc.anonymous],
        ['unknown token', unknown],
      ] as const) {
        const body = ['GET', 'DELETE', 'OPTIONS'].includes(route.method) ? undefined : {};
        const res = await client.request(route.method, path, body);
        if (res.status !== 403 || typeof res.body?.detail !== 'string') {
          problems.push(`${route.method} ${path} (${who}) -> ${res.status} ${JSON.stringify(res.body)}`);
        }
      }
    }
    assert.deepEqual(problems, []);
  });

  it('refuses every writing route to a write_enabled:false token (403), before touching anything', async () => {
    const created = await svc.admin.post('/api/users/tokens/', { write_enabled: false });
    const reader = svc.as(created.body.key);
    const changesBefore = await svc.host.db.selectFrom('object_changes').select('id').execute();
    const problems: string[] = [];
    for (const route of routes) {
      const writes = route.writes ?? !['GET', 'OPTIONS'].includes(route.method);
      if (!writes || 'public' in route.access) continue;
      const path = concrete(route, '1');
      const res = await reader.request(route.method, path, route.method === 'DELETE' ? undefined : {});
      if (res.status !== 403) problems.push(`${route.method} ${path} -> ${res.status} ${JSON.stringify(res.body)}`);
    }
    assert.deepEqual(problems, []);
    const changesAfter = await svc.host.db.selectFrom('object_changes').select('id').execute();
    assert.equal(changesAfter.length, changesBefore.length);
  });
});
