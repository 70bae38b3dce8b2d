import type { AddressInfo } from 'node:net';
import { createServer, type Server } from 'node:http';
import { createApp } from '../../server/app';
import { ManualClock } from '../../server/core/clock';
import { parseConfig, type ConfigInput } from '../../server/core/config';
import type { Host, HostPlugin } from '../../server/core/host';
import { MemoryLogger } from '../../server/core/logger';
import { openDatabase } from '../../server/db/database';
import { bootstrapAdmin } from '../../server/users/bootstrap';
import type { Config } from '../../server/core/config';
import { branchingPlugin } from '../../server/branching/plugin';

/** The host with its branching plugin and without change control (for tests of the host itself: no merge gate). */
export const hostOnly = (): HostPlugin[] => [branchingPlugin()];

export const ADMIN_TOKEN = '0123456789abcdef0123456789abcdef01234567';

export interface TestService {
  url: string;
  host: Host;
  clock: ManualClock;
  log: MemoryLogger;
  config: Config;
  /** A client acting as the superuser `admin`. */
  admin: ApiClient;
  /** A client with another token. */
  as(token: string): ApiClient;
  /** A client sending no token. */
  anonymous: ApiClient;
  close(): Promise<void>;
}

export interface ApiResponse<T = any> {
  status: number;
  body: T;
  headers: Headers;
}

export interface RequestOptions {
  headers?: Record<string, string>;
  /** Sent as-is (no JSON encoding, no content type added). */
  raw?: string;
}

/** A small HTTP client for tests: JSON in, JSON out, every answer returned (never thrown). */
export class ApiClient {
  constructor(
    readonly baseUrl: string,
    readonly token: string | null,
    readonly branch: string | null = null,
  ) {}

  /** The same caller, in a branch (`X-NetBox-Branch`). */
  inBranch(schemaId: string | null): ApiClient {
    return new ApiClient(this.baseUrl, this.token, schemaId);
  }

  async request<T = any>(method: string, path: string, body?: unknown, options: RequestOptions = {}): Promise<ApiResponse<T>> {
    const headers: Record<string, string> = { Accept: 'application/json', ...(options.headers ?? {}) };
    if (this.token) headers.Authorization = `Token ${this.token}`;
    if (this.branch) headers['X-NetBox-Branch'] = this.branch;
    let payload: string | undefined;
    if (options.raw !== undefined) payload = options.raw;
    else if (body !== undefined) {
      payload = JSON.stringify(body);
      headers['Content-Type'] ??= 'application/json';
    }
    const url = path.startsWith('http') ? path : `${this.baseUrl}${path}`;
    const res = await fetch(url, { method, headers, body: payload });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      /* keep text */
    }
    return { status: res.status, body: parsed as T, headers: res.headers };
  }

  get<T = any>(path: string, options?: RequestOptions) {
    return this.request<T>('GET', path, undefined, options);
  }
  post<T = any>(path: string, body?: unknown, options?: RequestOptions) {
    return this.request<T>('POST', path, body, options);
  }
  patch<T = any>(path: string, body?: unknown, options?: RequestOptions) {
    return this.request<T>('PATCH', path, body, options);
  }
  put<T = any>(path: string, body?: unknown, options?: RequestOptions) {
    return this.request<T>('PUT', path, body, options);
  }
  delete<T = any>(path: string, options?: RequestOptions) {
    return this.request<T>('DELETE', path, undefined, options);
  }
}

export interface StartOptions {
  config?: ConfigInput;
  plugins?: HostPlugin[];
  /** Database path (default `:memory:`: a fresh database per service). */
  db?: string;
  clockStart?: string;
  configDir?: string;
}

/** Starts the real service in process on an ephemeral loopback port, with a fresh database and a manual clock. */
export async function startService(options: StartOptions = {}): Promise<TestService> {
  const database = openDatabase(options.db ?? ':memory:');
  const clock = new ManualClock(options.clockStart ?? '2026-11-01T09:00:00Z');
  const log = new MemoryLogger();
  const config = parseConfig(options.config ?? {});
  const { app, host } = await createApp({ db: database.db, clock, config, log, plugins: options.plugins, configDir: options.configDir });
  await bootstrapAdmin(database.db, clock, ADMIN_TOKEN);
  const server: Server = createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  for (const task of host.background) task.start();
  return {
    url,
    host,
    clock,
    log,
    config,
    admin: new ApiClient(url, ADMIN_TOKEN),
    anonymous: new ApiClient(url, null),
    as: (token) => new ApiClient(url, token),
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      for (const task of host.background) await task.stop();
      await database.close();
    },
  };
}
