/** What plugin routes may use of the host's HTTP layer: route definitions and standard resources. */
export {
  envelope,
  parseFilters,
  parseOrdering,
  parsePage,
  parseSearch,
  parseShape,
  rejectUnknownParams,
  shapeObject,
} from './query';
export type { FilterDef } from './query';
export { getViewable, parseId, registerResource, requireObjectPermission } from './resource';
export type { ListOptions } from './resource';
export { presentedById } from './row-reads';
export { Reply, StreamReply } from './routes';
export type { QueryParams } from './routes';
