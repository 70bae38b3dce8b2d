import { z } from 'zod';
import { briefFields } from '../../../contract/api/common';
import type { Ctx } from '../core/context';
import { NotFound } from '../core/errors';
import type { Host } from '../host';
import type { ObjectTypeDef } from './object-types';
import type { FilterDef } from '../http/query';
import { addListInMemory, parseId } from '../http/resource';
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
    app_label: { type: 'choice', choices: labels, description: 'Filter on the application label, e.g. dcim.' },
    model: { type: 'string', description: 'Filter on the model name, e.g. device.' },
  };
}

/** `/api/core/object-types/` (read-only): the catalogue of object types, host and plugins alike. */
export function registerObjectTypes(host: Host): void {
  const routes = host.routes.group({
    path: PATH,
    tag: 'core',
    access: { authenticated: true },
    response: objectTypeOutput,
  });

  addListInMemory(routes, {
    summary: 'List object types',
    q: 'Free text: a case-insensitive substring of the application label, model or name.',
    noun: 'object type',
    filters: () => filters(host),
    ordering: ORDERING,
    items: async (ctx, parsed) =>
      host.objectTypes
        .all()
        .map((t) => present(ctx, t))
        .filter(
          (t) =>
            (!parsed.id || parsed.id.includes(t.id)) &&
            (!parsed.app_label || parsed.app_label.includes(t.app_label)) &&
            (!parsed.model || parsed.model.includes(t.model)),
        ),
    text: (t) => [t.app_label, t.model, t.display],
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
