import type { Ctx } from './context';

export interface SearchHit {
  object_type: string;
  id: number;
  display: string;
  url: string;
  field: string;
  value: string;
}

/** A model's contribution to `/api/search/`; it returns only what the caller may view. */
export type SearchProvider = (ctx: Ctx, q: string, limit: number) => Promise<SearchHit[]>;

export class SearchRegistry {
  private readonly providers: SearchProvider[] = [];
  register(provider: SearchProvider): void {
    this.providers.push(provider);
  }
  async search(ctx: Ctx, q: string, limit: number): Promise<SearchHit[]> {
    const hits: SearchHit[] = [];
    for (const provider of this.providers) {
      hits.push(...(await provider(ctx, q, limit)));
      if (hits.length >= limit) break;
    }
    return hits.slice(0, limit);
  }
}
