import type { Ctx } from '../core/context';
import type { ObjectTypeDef } from './object-types';
import { briefObject, type ApiObject } from '../core/api-object';
import { displayOf } from './attributes';
import type { ObjectState } from './main-repository';

/** The API form of an object: `id, url, display`, its attributes, `created, last_updated`. */
export function presentObject(ctx: Ctx, def: ObjectTypeDef, state: ObjectState): ApiObject {
  return {
    ...briefObject(ctx, def.path ?? '/', state.id, displayOf(def.display, state.id, state.attrs)),
    ...state.attrs,
    created: state.created,
    last_updated: state.lastUpdated,
  };
}
