export interface SearchHit {
  object_type: string;
  id: number;
  display: string;
  url: string;
  field: string;
  value: string;
}

/** A model's contribution to `/api/search/`; it returns only what the caller may view. */
export type SearchProvider<C> = (ctx: C, q: string, limit: number) => Promise<SearchHit[]>;

export class SearchRegistry<C> {
  private readonly providers: SearchProvider<C>[] = [];
  register(provider: SearchProvider<C>): void {
    this.providers.push(provider);
  }
  /**
   * At most `limit` hits, and whether more matched (`truncated`): providers are asked for one
   * hit more than the answer holds, so a capped answer is told from an exact one.
   */
  async search(ctx: C, q: string, limit: number): Promise<{ hits: SearchHit[]; truncated: boolean }> {
    const hits: SearchHit[] = [];
    for (const provider of this.providers) {
      hits.push(...(await provider(ctx, q, limit + 1 - hits.length)));
      if (hits.length > limit) break;
    }
    return { hits: hits.slice(0, limit), truncated: hits.length > limit };
  }
}
