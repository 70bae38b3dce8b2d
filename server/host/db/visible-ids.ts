import type { Expression } from 'kysely';

/** A subquery answering ids (of the objects of one type a caller may view), for `column in (...)`. */
export type VisibleIds = Expression<number>;
