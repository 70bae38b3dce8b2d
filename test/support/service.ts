import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request as httpRequest, type Server } from 'node:http';
import { createApp, migrationsOf, serverFor } from '../../server/app';
import { defaultPlugins } from '../../server/plugins';
import { openTestDatabase } from './database';
import { ManualClock } from '../../server/host/core/clock';
import { defaultConfig, parseConfig, type ConfigInput } from '../../server/host/core/config';
import { openDatabase } from '../../server/host/db/database';
import type { Host, HostPlugin } from '../../server/host/host';
import { MemoryLogger } from '../../server/host/core/logger';
import { bootstrapAdmin } from '../../server/host/users/bootstrap';
import type { Config } from '../../server/host/core/config';
import { branchingPlugin } from '../../server/plugins/branching/plugin';

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
  /** Stops answering as a stopped service does (every connection closed); its port stays for resume(). */
  pause(): Promise<void>;
  /** Answers again on the same port. */
  resume(): Promise<void>;
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
    /** The loopback address requests come from (e.g. `127.0.0.2`); default the system's choice. */
    readonly localAddress: string | null = null,
  ) {}

  /** The same caller, in a branch (`X-NetBox-Branch`). */
  inBranch(schemaId: string | null): ApiClient {
    return new ApiClient(this.baseUrl, this.token, schemaId, this.localAddress);
  }

  /** The same caller, connecting from another loopback address (another client machine, as the service sees it). */
  from(localAddress: string): ApiClient {
    return new ApiClient(this.baseUrl, this.token, this.branch, localAddress);
  }

  /**
   * The same caller, each request from a loopback address of its own: for tests that send many
   * bad credentials on purpose and are about the answer, not the throttle.
   */
  fromManyAddresses(): ApiClient {
    return new ApiClient(this.baseUrl, this.token, this.branch, ROTATE);
  }

  async request<T = any>(
    method: string,
    path: string,
    body?: unknown,
    options: RequestOptions = {},
  ): Promise<ApiResponse<T>> {
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
    if (this.localAddress !== null)
      return fromAddress(
        this.localAddress === ROTATE ? nextAddress() : this.localAddress,
        url,
        method,
        headers,
        payload,
      );
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

/** Each GET of `[path, parameter]` is a 400 whose body names that parameter alone, with its messages. */
export async function expectQueriesRefused(
  client: ApiClient,
  cases: ReadonlyArray<readonly [string, string]>,
): Promise<void> {
  for (const [path, name] of cases) {
    const res = await client.get(path);
    if (res.status !== 400 || Object.keys(res.body ?? {}).join() !== name || !Array.isArray(res.body[name])) {
      throw new Error(`${path}: expected 400 naming ${name}, got ${res.status} ${JSON.stringify(res.body)}`);
    }
  }
}

const ROTATE = 'rotate';
let rotated = 0;
/** 127.1.0.1, 127.1.0.2, ...: a fresh loopback address per call. */
function nextAddress(): string {
  const n = rotated++;
  return `127.1.${Math.floor(n / 250) % 250}.${1 + (n % 250)}`;
}

/** One request over node:http from a chosen local address. */
function fromAddress<T>(
  localAddress: string,
  url: string,
  method: string,
  headers: Record<string, string>,
  payload: string | undefined,
): Promise<ApiResponse<T>> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method, headers, localAddress, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let body: unknown = text;
        try {
          body = text ? JSON.parse(text) : undefined;
        } catch {
          /* keep text */
        }
        const out = new Headers();
        for (const [k, v] of Object.entries(res.headers)) if (typeof v === 'string') out.set(k, v);
        resolve({ status: res.statusCode ?? 0, body: body as T, headers: out });
      });
    });
    req.on('error', reject);
    req.end(payload);
  });
}

export interface StartOptions {
  config?: ConfigInput;
  plugins?: HostPlugin[];
  /**
   * Database path (default `:memory:`: a fresh database per service). On PostgreSQL
   * (`TEST_DATABASE_URL`), a name for a schema kept while the tests run.
   */
  db?: string;
  clockStart?: string;
  configDir?: string;
}

/**
 * A service for the enclosing `describe`: started before its tests and closed after them; `ready`
 * gets it once started, to keep it and to prepare what the tests share (a world, a cast).
 */
export function serviceForSuite(ready: (svc: TestService) => void | Promise<void>, options: StartOptions = {}): void {
  serviceAround(before, after, ready, options);
}

/**
 * A fresh service for each test of the enclosing `describe`: started before the test and closed
 * after it; `ready` gets it once started, to keep it and to prepare what the test needs.
 */
export function serviceForEachTest(
  ready: (svc: TestService) => void | Promise<void>,
  options: StartOptions = {},
): void {
  serviceAround(beforeEach, afterEach, ready, options);
}

/**
 * The service of the enclosing `describe`, as a value its tests use directly: filled in with the
 * started service before the first test, closed after the last.
 */
export function suiteService(options: StartOptions = {}): TestService {
  const svc = {} as TestService;
  serviceForSuite((started) => void Object.assign(svc, started), options);
  return svc;
}

/** A fresh service for each test of the enclosing `describe`, as a value its tests use directly. */
export function eachTestService(options: StartOptions = {}): TestService {
  const svc = {} as TestService;
  serviceForEachTest((started) => void Object.assign(svc, started), options);
  return svc;
}

function serviceAround(
  start: Mocha.HookFunction,
  stop: Mocha.HookFunction,
  ready: (svc: TestService) => void | Promise<void>,
  options: StartOptions,
): void {
  let svc: TestService | undefined;
  start(async () => {
    svc = await startService(options);
    await ready(svc);
  });
  stop(async () => {
    await svc?.close();
    svc = undefined;
  });
}

/**
 * Runs `test` against a service started for it alone (`svc`: a service being started) and closes
 * the service afterwards, whatever `test` does.
 */
export async function withService<T>(svc: Promise<TestService>, test: (svc: TestService) => Promise<T>): Promise<T> {
  const started = await svc;
  try {
    return await test(started);
  } finally {
    await started.close();
  }
}

/**
 * Two instances of the service on one database (a SQLite file, or one PostgreSQL schema), started
 * afresh before each test of the enclosing `describe` and stopped after it, as values its tests use
 * directly: `const [a, b] = instancesForEachTest();`.
 */
export function instancesForEachTest(): [TestService, TestService] {
  const instances: [TestService, TestService] = [{} as TestService, {} as TestService];
  let dir = '';
  let started: TestService[] = [];
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'cc-instances-'));
    const db = join(dir, 'shared.sqlite');
    started = [await startService({ db }), await startService({ db })];
    started.forEach((svc, i) => Object.assign(instances[i]!, svc));
  });
  afterEach(async () => {
    for (const svc of started) await svc.close();
    started = [];
    rmSync(dir, { recursive: true, force: true });
  });
  return instances;
}

/** Starts the real service in process on an ephemeral loopback port, with a fresh database and a manual clock. */
export async function startService(options: StartOptions = {}): Promise<TestService> {
  const clock = new ManualClock(options.clockStart ?? '2026-11-01T09:00:00Z');
  const log = new MemoryLogger();
  const config = parseConfig(options.config ?? {});
  const plugins = options.plugins ?? defaultPlugins(config, options.configDir ?? process.cwd());
  const database = await openTestDatabase(migrationsOf(plugins), options.db);
  const { app, host, allowHost } = await createApp({
    db: database.db,
    clock,
    config,
    log,
    plugins,
    configDir: options.configDir,
  });
  // As the service does: it answers to the address it listens on, besides host.allowed_hosts.
  allowHost('127.0.0.1');
  await bootstrapAdmin(database.db, clock, ADMIN_TOKEN);
  const server: Server = serverFor(app);
  // The clients of a test share the service's event loop: on a loaded machine a connection left
  // idle for the server's default 5 s could be closed just as a client reuses it (ECONNRESET).
  // Tests close every connection themselves (close() below).
  server.keepAliveTimeout = 120_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  for (const task of host.background) task.start();
  // What the tasks do at start (the gate clock's first look, the queue's) is done before a test begins.
  await host.unawaited.settled();
  return {
    url,
    host,
    clock,
    log,
    config,
    admin: new ApiClient(url, ADMIN_TOKEN),
    anonymous: new ApiClient(url, null),
    as: (token) => new ApiClient(url, token),
    pause: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
    resume: () =>
      new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(Number(new URL(url).port), '127.0.0.1', () => {
          server.off('error', reject);
          resolve();
        });
      }),
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      for (const task of host.background) await task.stop();
      await host.unawaited.settled();
      await database.close();
    },
  };
}

/**
 * Builds the app with `plugins` on a throwaway in-memory database and closes it again: for tests of
 * what start-up accepts (the app) or refuses (the error it throws).
 */
export async function buildApp(plugins: HostPlugin[], config: Config = defaultConfig()): ReturnType<typeof createApp> {
  const { db, close } = openDatabase(':memory:');
  try {
    return await createApp({ db, clock: new ManualClock(), config, log: new MemoryLogger(), plugins });
  } finally {
    await close();
  }
}
