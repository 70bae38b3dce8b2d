/** A small JSON client for seeding; any answer other than the expected status throws. */
export class Api {
  constructor(
    readonly base: string,
    readonly token: string,
    readonly branch: string | null = null,
  ) {}

  inBranch(schemaId: string): Api {
    return new Api(this.base, this.token, schemaId);
  }

  async call<T = any>(
    method: string,
    path: string,
    body?: unknown,
    expect = method === 'POST' ? [200, 201] : [200],
  ): Promise<T> {
    const headers: Record<string, string> = { Authorization: `Token ${this.token}`, Accept: 'application/json' };
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    if (this.branch) headers['X-NetBox-Branch'] = this.branch;
    const res = await fetch(`${this.base}${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (!expect.includes(res.status)) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 400)}`);
    return (text ? JSON.parse(text) : undefined) as T;
  }

  get<T = any>(path: string) {
    return this.call<T>('GET', path);
  }
  post<T = any>(path: string, body: unknown = {}) {
    return this.call<T>('POST', path, body);
  }
  patch<T = any>(path: string, body: unknown) {
    return this.call<T>('PATCH', path, body);
  }
  delete(path: string) {
    return this.call('DELETE', path, undefined, [204]);
  }
}

export const CC = '/api/plugins/change-control/';
