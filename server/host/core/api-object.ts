/** An object as the API shows it: at least its id and display text. */
export interface ApiObject {
  id: number;
  display: string;
  [key: string]: unknown;
}

/** An object's URL: its id under the collection `path` (e.g. `/api/users/groups/`) of the service at `baseUrl`. */
export function objectUrl(ctx: { readonly baseUrl: string }, path: string, id: number): string {
  return `${ctx.baseUrl}${path}${id}/`;
}

/** The fields every API object starts with, its brief form (`brief=true`): id, URL and display text. */
export function briefObject(ctx: { readonly baseUrl: string }, path: string, id: number, display: string): { id: number; url: string; display: string } {
  return { id, url: objectUrl(ctx, path, id), display };
}

/** The fields among `keys` that a write's input gives (not undefined), as given: the columns stored as the API names them. */
export function givenFields<I extends object, K extends keyof I>(input: I, keys: readonly K[]): Partial<Pick<I, K>> {
  const out: Partial<Pick<I, K>> = {};
  for (const key of keys) if (input[key] !== undefined) out[key] = input[key];
  return out;
}
