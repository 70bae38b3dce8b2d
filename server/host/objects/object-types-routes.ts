import { z } from 'zod';
import { briefFields } from '../../../contract/api/common';
import type { Ctx } from '../core/context';
import { NotFound } from '../core/errors';
import type { Host } from '../host';
import type { ObjectTypeDef } from './object-types';
import { pageInMemory, parseFilters, parseOrdering, rejectUnknownParams, type FilterDef } from '../http/query';
import { pagingQueryDocs, parseId } from '../http/resource';
import { briefObject } from '../core/api-object';

const PATH = '/api/core/object-types/';

export const objectTypeOutput = z.object({
  ...briefFields,
  app_label: z.string(),
  model: z.string(),
});
type ObjectTypeOut = z.infer<typeof objectTypeOutput>;

const ORDERING = ['id', 'app_label', 'model', 'display'];

function present(ctx: Ctx, def: ObjectTypeDef & { id: number }): ObjectTypeOut {
  return {
    ...briefObject(ctx, PATH, def.id, def.display),
    app_label: def.appLabel,
    model: def.model,
  };
}

/** `app_label` is a choice among the registered labels, read at request time (plugins add theirs). */
function filters(host: Host): Record<string, FilterDef> {
  const labels = [...new Set(host.objectTypes.all().map((t) => t.appLabel))].sort();
  return {
    id: { type: 'int' },
    app_label: { type: 'choice', choices: labels },
    model: { type: 'string' },
  };
}

/** `/api/core/object-types/` (read-only): the catalogue of object types, host and plugins alike. */
export function registerObjectTypes(host: Host): void {
  const routes = host.routes.group({ path: PATH, tag: 'core', access: { authenticated: true }, response: objectTypeOutput });

  routes.add({
    method: 'GET',
    summary: 'List object types',
    query: [
      ...pagingQueryDocs({ ordering: 'Field to order by; prefix with - for descending.', q: 'Free text: a case-insensitive substring of the application label, model or name.', noun: 'object type' }),
      { name: 'id', description: 'Filter on id.', repeated: true },
      { name: 'app_label', description: 'Filter on the application label, e.g. dcim.', repeated: true },
      { name: 'model', description: 'Filter on the model name, e.g. device.', repeated: true },
    ],
    handler: async ({ ctx, query, url }) => {
      rejectUnknownParams(query, Object.keys(filters(host)));
      const parsed = parseFilters(query, filters(host), ctx.user?.id ?? null);
      const ordering = parseOrdering(query, ORDERING);
      const matching = host.objectTypes
        .all()
        .map((t) => present(ctx, t))
        .filter((t) => (!parsed.id || parsed.id.includes(t.id)) && (!parsed.app_label || parsed.app_label.includes(t.app_label)) && (!parsed.model || parsed.model.includes(t.model)));
      return pageInMemory(matching, { query, url, ordering, text: (t) => [t.app_label, t.model, t.display] });
    },
  });

  routes.add({
    method: 'GET',
    path: ':id/',
    summary: 'Retrieve an object type',
    handler: async ({ ctx, params }) => {
      const id = parseId(params.id);
      const def = host.objectTypes.all().find((t) => t.id === id);
      if (!def) throw new NotFound();
      return present(ctx, def);
    },
  });
}
