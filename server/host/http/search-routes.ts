import { searchResults } from '../../../contract/api/host';
import { ValidationError } from '../core/errors';
import type { Host } from '../host';
import { DEFAULT_LIMIT, MAX_LIMIT } from './query';

const MAX_QUERY = 200;

function readQuery(raw: string[] | undefined): string {
  const q = (raw?.[0] ?? '').trim();
  if (q === '') throw ValidationError.field('q', 'This parameter is required.');
  if (q.length > MAX_QUERY) throw ValidationError.field('q', `at most ${MAX_QUERY} characters`);
  return q;
}

function readLimit(raw: string[] | undefined): number {
  const text = raw?.[0];
  if (text === undefined || text === '') return DEFAULT_LIMIT;
  if (!/^\d+$/.test(text) || Number(text) < 1)
    throw ValidationError.field('limit', `"${text}" is not a positive integer.`);
  return Math.min(Number(text), MAX_LIMIT);
}

/**
 * `/api/search/?q=TEXT`: what the registered search providers find that the caller may view,
 * at most `limit` results; `truncated` says that more matched.
 */
export function registerSearch(host: Host): void {
  host.routes.add({
    method: 'GET',
    path: '/api/search/',
    access: { authenticated: true },
    summary: 'Search across models (only objects the caller may view); truncated is true when more matched than limit',
    tag: 'search',
    query: [
      { name: 'q', description: 'Text to look for (required, case-insensitive).' },
      { name: 'limit', description: `Most results to return (default ${DEFAULT_LIMIT}, at most ${MAX_LIMIT}).` },
    ],
    response: searchResults,
    handler: async ({ ctx, query }) => {
      const q = readQuery(query.q);
      const limit = readLimit(query.limit);
      const { hits, truncated } = await host.search.search(ctx, q, limit);
      return { results: hits, truncated };
    },
  });
}
