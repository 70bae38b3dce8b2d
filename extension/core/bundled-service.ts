// Starts the companion service bundled with the extension as a child process:
//   MALLOC_MMAP_THRESHOLD_=131072 <runtime> --max-semi-space-size=4 --heap-growing-percent=50 <extensionPath>/dist/server.js --host 127.0.0.1 --port 0 --db <file>
// with CHANGE_CONTROL_ADMIN_TOKEN set (the service's environment and Node options: launch/service-launch.ts), waits for its `listening on http://HOST:PORT` line, and
// stops it with SIGTERM (then SIGKILL). The runtime is the editor's own (`process.execPath` with
// ELECTRON_RUN_AS_NODE=1) on Node's built-in SQLite (`node:sqlite`): the package holds no native
// module, so one .vsix runs everywhere with nothing to install. `changeControl.nodePath` names
// another Node.js; an editor whose runtime lacks `node:sqlite` falls back to `node` on PATH.
// No VS Code here.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { SERVICE_ENVIRONMENT, SERVICE_NODE_OPTIONS } from '../../launch/service-launch';

/** Where the runtime comes from: the editor itself, the setting, or `node` on PATH (the fallback). */
export type RuntimeSource = 'editor' | 'setting' | 'path';

/** A program that runs the service, and the environment it adds. */
export interface ServiceRuntime {
  program: string;
  source: RuntimeSource;
  env: Readonly<Record<string, string>>;
}

/** The setting that names another Node.js. */
const NODE_PATH_SETTING = 'changeControl.nodePath';

/** The variable that names the service's SQLite driver (`server/host/db/sqlite-driver-choice.ts`). */
export const SQLITE_DRIVER_ENV = 'CHANGE_CONTROL_SQLITE_DRIVER';

/** The oldest Node.js whose `node:sqlite` the service uses (`columns()`, `setReturnArrays()`). */
export const MIN_NODE_SQLITE = { major: 22, minor: 16 } as const;

/** The oldest Node.js the bundled service runs on (with better-sqlite3, where it is installed). */
export const MIN_NODE = { major: 20, minor: 19 } as const;

/** The editor's own runtime, as a Node.js, on Node's SQLite. */
export function editorRuntime(execPath: string): ServiceRuntime {
  return { program: execPath, source: 'editor', env: { ELECTRON_RUN_AS_NODE: '1', [SQLITE_DRIVER_ENV]: 'node' } };
}

/** The Node.js `changeControl.nodePath` names, or `node` on PATH: the service picks its driver (`auto`). */
export function otherRuntime(nodePath: string | null): ServiceRuntime {
  return nodePath
    ? { program: nodePath, source: 'setting', env: { ELECTRON_RUN_AS_NODE: '1' } }
    : { program: 'node', source: 'path', env: { ELECTRON_RUN_AS_NODE: '1' } };
}

/** A runtime in words, naming where it came from. */
export function runtimeWords(runtime: ServiceRuntime): string {
  if (runtime.source === 'editor') return `the editor's runtime "${runtime.program}"`;
  if (runtime.source === 'setting') return `"${runtime.program}" (setting ${NODE_PATH_SETTING})`;
  return `"${runtime.program}" on PATH (${NODE_PATH_SETTING} is not set)`;
}

/** What a runtime said of itself: its Node.js version, and whether it has `node:sqlite` as the service uses it. */
export interface RuntimeProbe {
  version: string;
  sqlite: boolean;
}

/** The runtime to start, and why it is not the editor's when it is not (for the log and the failure view). */
export interface RuntimeDecision {
  runtime: ServiceRuntime;
  note: string | null;
  /** What the runtime answered, when it was asked already (the editor's). */
  probe: RuntimeProbe | null;
}

/**
 * Which runtime runs the bundled service: `changeControl.nodePath` when set (today's way);
 * otherwise the editor's own when it has `node:sqlite` (`editor`: what it answered, or why it
 * did not); otherwise `node` on PATH, saying why.
 */
export function decideServiceRuntime(
  nodePath: string | null,
  execPath: string,
  editor: RuntimeProbe | { problem: string } | null,
): RuntimeDecision {
  if (nodePath) return { runtime: otherRuntime(nodePath), note: null, probe: null };
  if (editor && 'sqlite' in editor && editor.sqlite)
    return { runtime: editorRuntime(execPath), note: null, probe: editor };
  const why =
    editor === null
      ? 'could not be asked'
      : 'problem' in editor
        ? `could not be asked (${editor.problem})`
        : `is Node.js ${editor.version}, which has no built-in SQLite as the service uses it (node:sqlite, Node.js ${MIN_NODE_SQLITE.major}.${MIN_NODE_SQLITE.minor} or newer)`;
  return {
    runtime: otherRuntime(null),
    note: `The editor's runtime "${execPath}" ${why}: the bundled service runs on "node" from PATH instead (set ${NODE_PATH_SETTING} to choose a Node.js).`,
    probe: null,
  };
}

export interface LaunchOptions {
  runtime: ServiceRuntime;
  serverScript: string;
  dbPath: string;
  adminToken: string;
  /** Said before any failure's reason (why the runtime is not the editor's). */
  note?: string | null;
  /** What the runtime answered, when it was asked already (else it is asked first). */
  probe?: RuntimeProbe | null;
  /** Waiting for the ready line (default 60 s: the first start creates and migrates the database). */
  startTimeoutMs?: number;
  /** Lines the service writes (stdout and stderr), for the log channel. Never the admin token. */
  log?: (line: string) => void;
  /** Extra environment (tests). */
  env?: NodeJS.ProcessEnv;
}

export interface RunningService {
  readonly url: string;
  readonly pid: number;
  /** The runtime it runs on. */
  readonly runtime: ServiceRuntime;
  /** Resolves when the process has ended (for any reason). */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stop(graceMs?: number): Promise<void>;
}

export class ServiceStartError extends Error {
  constructor(
    message: string,
    readonly output: string,
  ) {
    super(message);
    this.name = 'ServiceStartError';
  }
}

const READY = /^listening on (https?:\/\/\S+)\s*$/;

/** The URL of a `listening on http://HOST:PORT` line, or null. */
export function parseListeningLine(line: string): string | null {
  const m = READY.exec(line.trim());
  return m ? m[1] : null;
}

/** How every start failure's message begins. */
export const START_FAILED = 'The bundled service could not start:';

/** Why a start failed, in words a user can act on; null when the output says nothing known. */
export function explainStartFailure(output: string, runtime: ServiceRuntime, nodeVersion?: string): string | null {
  if (/no SQLite driver:/.test(output)) {
    const running = nodeVersion ? `Node.js ${nodeVersion}` : 'a Node.js';
    const instead =
      runtime.source === 'setting'
        ? `Clear ${NODE_PATH_SETTING} to use the editor's own runtime, or set it to`
        : `Set ${NODE_PATH_SETTING} to`;
    return `${runtimeWords(runtime)} is ${running}, which has no built-in SQLite as the service uses it (node:sqlite). ${instead} Node.js ${MIN_NODE_SQLITE.major}.${MIN_NODE_SQLITE.minor} or newer.`;
  }
  return null;
}

/** Why a program could not be run, from the spawn error's code, in words. */
export function explainSpawnFailure(code: string | undefined, runtime: ServiceRuntime, message: string): string {
  const words = runtimeWords(runtime);
  if (code === 'ENOENT') {
    return `Node.js was not found: ${words} is not a program on this machine. Install Node.js ${MIN_NODE_SQLITE.major}.${MIN_NODE_SQLITE.minor} or newer, or set ${NODE_PATH_SETTING} to its full path.`;
  }
  if (code === 'EACCES' || code === 'EPERM') return `${words} may not be run (permission denied).`;
  return `${words} could not be run (${message}).`;
}

/** Whether a Node.js version (e.g. "20.20.2") can run the service; a reason when not. */
export function checkNodeVersion(version: string, runtime: ServiceRuntime): string | null {
  const m = /^v?(\d+)\.(\d+)\.(\d+)/.exec(version.trim());
  if (!m) return `${runtimeWords(runtime)} did not answer as Node.js does (it said "${version.trim().slice(0, 80)}").`;
  const [major, minor] = [Number(m[1]), Number(m[2])];
  if (major < MIN_NODE.major || (major === MIN_NODE.major && minor < MIN_NODE.minor)) {
    return `${runtimeWords(runtime)} is Node.js ${m[0].replace(/^v/, '')}, too old: the bundled service needs Node.js ${MIN_NODE_SQLITE.major}.${MIN_NODE_SQLITE.minor} or newer. Install it, or set ${NODE_PATH_SETTING} to one.`;
  }
  return null;
}

/**
 * What the probe prints: the Node.js version, and `sqlite` when `node:sqlite` has what the
 * service's driver uses (the same test as `nodeSqlite.problem()` in
 * `server/host/db/sqlite-node.ts`; `bundled-service.test.ts` holds them to agree).
 */
const PROBE_SCRIPT = `(() => {
  let sqlite = 'none';
  try {
    const statement = require('node:sqlite').StatementSync.prototype;
    if (typeof statement.columns === 'function' && typeof statement.setReturnArrays === 'function') sqlite = 'sqlite';
  } catch {}
  return process.versions.node + ' ' + sqlite;
})()`;

/** Asks a runtime for its version and its SQLite; rejects with a ServiceStartError in words when it is missing, not Node.js, or too old. */
export function probeRuntime(
  runtime: ServiceRuntime,
  env: NodeJS.ProcessEnv = process.env,
  timeoutMs = 15_000,
): Promise<RuntimeProbe> {
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    let child: ChildProcess;
    const childEnv: NodeJS.ProcessEnv = { ...env, ELECTRON_RUN_AS_NODE: '1' };
    delete childEnv.NODE_OPTIONS;
    try {
      child = spawn(runtime.program, ['-p', PROBE_SCRIPT], {
        env: childEnv,
        stdio: ['ignore', 'pipe', 'pipe'],
        windowsHide: true,
        timeout: timeoutMs,
      });
    } catch (e) {
      const error = e as NodeJS.ErrnoException;
      reject(new ServiceStartError(explainSpawnFailure(error.code, runtime, error.message), ''));
      return;
    }
    // Standard error apart: a Node.js that calls node:sqlite experimental says so there.
    child.stdout!.setEncoding('utf8').on('data', (d: string) => (out = `${out}${d}`.slice(0, 2000)));
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (err = `${err}${d}`.slice(0, 2000)));
    child.once('error', (e: NodeJS.ErrnoException) =>
      reject(new ServiceStartError(explainSpawnFailure(e.code, runtime, e.message), `${out}${err}`)),
    );
    child.once('close', (code) => {
      const said = (out.trim() || err.trim()).split(/\r?\n/)[0] ?? '';
      const [version = '', sqlite] = said.split(' ');
      const problem =
        code === 0
          ? checkNodeVersion(said, runtime)
          : `${runtimeWords(runtime)} did not answer as Node.js does (exit code ${code}${said ? `: ${said.slice(0, 80)}` : ''}).`;
      if (problem) reject(new ServiceStartError(problem, `${out}${err}`));
      else resolve({ version: version.replace(/^v/, ''), sqlite: sqlite === 'sqlite' });
    });
  });
}

/**
 * Which runtime runs the service (`decideServiceRuntime`), asking the editor's runtime first when
 * `changeControl.nodePath` is not set.
 */
export async function chooseServiceRuntime(
  nodePath: string | null,
  execPath: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<RuntimeDecision> {
  if (nodePath) return decideServiceRuntime(nodePath, execPath, null);
  let editor: RuntimeProbe | { problem: string };
  try {
    editor = await probeRuntime(editorRuntime(execPath), env);
  } catch (e) {
    editor = { problem: (e as Error).message };
  }
  return decideServiceRuntime(nodePath, execPath, editor);
}

/**
 * Starts the service: first checks that the runtime is a Node.js that can run it (missing, not
 * Node.js, or too old: a ServiceStartError saying so), then runs it and waits for its ready line.
 * Every failure's message starts with START_FAILED, then the note (why not the editor's runtime).
 */
export async function launchService(opts: LaunchOptions): Promise<RunningService> {
  const prefix = opts.note ? `${START_FAILED} ${opts.note}` : START_FAILED;
  let probe: RuntimeProbe;
  try {
    probe = opts.probe ?? (await probeRuntime(opts.runtime, { ...process.env, ...opts.env }));
  } catch (e) {
    if (e instanceof ServiceStartError) throw new ServiceStartError(`${prefix} ${e.message}`, e.output);
    throw e;
  }
  return spawnService(opts, probe.version, prefix);
}

function spawnService(opts: LaunchOptions, nodeVersion: string, prefix: string): Promise<RunningService> {
  mkdirSync(dirname(opts.dbPath), { recursive: true });
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ...SERVICE_ENVIRONMENT,
    ...opts.runtime.env,
    ...opts.env,
    CHANGE_CONTROL_ADMIN_TOKEN: opts.adminToken,
    // An Electron binary (the editor's, or one named by the setting) runs as Node.js.
    ELECTRON_RUN_AS_NODE: '1',
  };
  // The editor's debugger and loader flags must not reach the service.
  delete env.NODE_OPTIONS;
  delete env.HOST;
  delete env.PORT;
  let child: ChildProcess;
  try {
    child = spawn(
      opts.runtime.program,
      [...SERVICE_NODE_OPTIONS, opts.serverScript, '--host', '127.0.0.1', '--port', '0', '--db', opts.dbPath],
      {
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
        windowsHide: true,
      },
    );
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    return Promise.reject(
      new ServiceStartError(`${prefix} ${explainSpawnFailure(err.code, opts.runtime, err.message)}`, ''),
    );
  }

  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
    child.once('error', () => resolve({ code: null, signal: null }));
  });

  return new Promise<RunningService>((resolve, reject) => {
    let output = '';
    let settled = false;
    const remember = (line: string) => {
      output = `${output}${line}\n`.slice(-4000);
      opts.log?.(line);
    };
    const settle = (fn: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      fn();
    };
    const fail = (why: string) =>
      settle(() => {
        const hint = explainStartFailure(output, opts.runtime, nodeVersion);
        reject(new ServiceStartError(`${prefix} ${hint ?? why}`, output));
      });

    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      fail(`no "listening on" line within ${opts.startTimeoutMs ?? 60_000} ms`);
    }, opts.startTimeoutMs ?? 60_000);

    lines(child.stdout!, (line) => {
      if (/^admin token:/i.test(line)) return; // never logged
      remember(line);
      const url = parseListeningLine(line);
      if (url) settle(() => resolve(running(child, url, opts.runtime, exited)));
    });
    lines(child.stderr!, remember);
    child.once('error', (e: NodeJS.ErrnoException) => fail(explainSpawnFailure(e.code, opts.runtime, e.message)));
    void exited.then(({ code, signal }) => {
      const last = output.trim().split('\n').pop()?.trim();
      fail(
        `it exited (${signal ?? `code ${code}`})${last ? `, saying "${last.slice(0, 200)}"` : ''}. See the log (Show Logs) for its whole output.`,
      );
    });
  });
}

function lines(stream: NodeJS.ReadableStream, onLine: (line: string) => void): void {
  let buffer = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk: string) => {
    buffer += chunk;
    let i: number;
    while ((i = buffer.indexOf('\n')) >= 0) {
      onLine(buffer.slice(0, i).replace(/\r$/, ''));
      buffer = buffer.slice(i + 1);
    }
  });
  stream.on('end', () => {
    if (buffer) onLine(buffer);
    buffer = '';
  });
}

function running(
  child: ChildProcess,
  url: string,
  runtime: ServiceRuntime,
  exited: RunningService['exited'],
): RunningService {
  let stopping: Promise<void> | undefined;
  return {
    url,
    runtime,
    pid: child.pid ?? -1,
    exited,
    stop(graceMs = 5_000) {
      stopping ??= (async () => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
        await exited;
        clearTimeout(timer);
      })();
      return stopping;
    },
  };
}
