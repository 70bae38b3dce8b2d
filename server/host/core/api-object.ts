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
export function briefObject(
  ctx: { readonly baseUrl: string },
  path: string,
  id: number,
  display: string,
): { id: number; url: string; display: string } {
  return { id, url: objectUrl(ctx, path, id), display };
}

/** The fields among `keys` that a write's input gives (not undefined), as given: the columns stored as the API names them. */
export function givenFields<I extends object, K extends keyof I>(
  input: I,
  keys: readonly K[],
): Partial<Pick<I, NoInfer<K>>> {
  const out: Partial<Pick<I, K>> = {};
  for (const key of keys) if (input[key] !== undefined) out[key] = input[key];
  return out;
}

/** These fields of a row as it holds them, in this order (a presenter's fields shown as stored). */
export function fieldsOf<R extends object, K extends keyof R>(row: R, keys: readonly K[]): Pick<R, NoInfer<K>> {
  // Starts empty and gets every key of `keys` below, which makes it the Pick.
  const out = {} as Pick<R, K>;
  for (const key of keys) out[key] = row[key];
  return out;
}
