// Starts the companion service bundled with the extension as a child process:
//   MALLOC_MMAP_THRESHOLD_=131072 <node> --max-semi-space-size=4 --heap-growing-percent=50 <extensionPath>/dist/server.js --host 127.0.0.1 --port 0 --db <file>
// with CHANGE_CONTROL_ADMIN_TOKEN set (the service's environment and Node options: launch/service-launch.ts), waits for its `listening on http://HOST:PORT` line, and
// stops it with SIGTERM (then SIGKILL). A separate Node runs it because the native SQLite module
// is built for that Node, not for the editor's own runtime. No VS Code here.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { SERVICE_ENVIRONMENT, SERVICE_NODE_OPTIONS } from '../../launch/service-launch';

export interface LaunchOptions {
  nodePath: string;
  serverScript: string;
  dbPath: string;
  adminToken: string;
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

/** The oldest Node.js the bundled service runs on. */
export const MIN_NODE = { major: 20, minor: 19 } as const;

/** Node.js majors by the NODE_MODULE_VERSION of their native modules. */
const NODE_OF_ABI: Record<string, string> = {
  '93': '16',
  '108': '18',
  '115': '20',
  '120': '21',
  '127': '22',
  '131': '23',
  '137': '24',
  '141': '25',
  '147': '26',
};

const nodeOfAbi = (abi: string) =>
  NODE_OF_ABI[abi] ? `Node.js ${NODE_OF_ABI[abi]}` : `a Node.js with NODE_MODULE_VERSION ${abi}`;

/** Why a start failed, in words a user can act on (naming the Node.js it needs); null when the output says nothing known. */
export function explainStartFailure(output: string, nodePath: string, nodeVersion?: string): string | null {
  const running = nodeVersion ? `Node.js ${nodeVersion}` : 'another Node.js';
  const abi =
    /using\s+NODE_MODULE_VERSION\s+(\d+)\.\s+This version of Node\.js requires\s+NODE_MODULE_VERSION\s+(\d+)/.exec(
      output,
    );
  if (abi) {
    return `its SQLite module was built for ${nodeOfAbi(abi[1])}, but "${nodePath}" (setting changeControl.nodePath) is ${running}. Set changeControl.nodePath to ${nodeOfAbi(abi[1])}.`;
  }
  if (/NODE_MODULE_VERSION|was compiled against a different Node\.js version|ERR_DLOPEN_FAILED/.test(output)) {
    return `its SQLite module was built for a different Node.js than "${nodePath}" (setting changeControl.nodePath, ${running}). Set changeControl.nodePath to the Node.js the extension was built with (20 or newer).`;
  }
  if (/Cannot find module .*better-sqlite3/.test(output))
    return 'the packaged SQLite module is missing from the extension: reinstall the extension.';
  return null;
}

/** Why a program could not be run, from the spawn error's code, in words. */
export function explainSpawnFailure(code: string | undefined, nodePath: string, message: string): string {
  if (code === 'ENOENT') {
    return `Node.js was not found: "${nodePath}" (setting changeControl.nodePath) is not a program on this machine. Install Node.js ${MIN_NODE.major}.${MIN_NODE.minor} or newer, or set changeControl.nodePath to its full path.`;
  }
  if (code === 'EACCES' || code === 'EPERM')
    return `"${nodePath}" (setting changeControl.nodePath) may not be run (permission denied).`;
  return `"${nodePath}" (setting changeControl.nodePath) could not be run (${message}).`;
}

/** Whether a Node.js version (e.g. "20.20.2") can run the service; a reason when not. */
export function checkNodeVersion(version: string, nodePath: string): string | null {
  const m = /^v?(\d+)\.(\d+)\.(\d+)/.exec(version.trim());
  if (!m)
    return `"${nodePath}" (setting changeControl.nodePath) did not answer as Node.js does (it said "${version.trim().slice(0, 80)}").`;
  const [major, minor] = [Number(m[1]), Number(m[2])];
  if (major < MIN_NODE.major || (major === MIN_NODE.major && minor < MIN_NODE.minor)) {
    return `"${nodePath}" (setting changeControl.nodePath) is Node.js ${m[0].replace(/^v/, '')}, too old: the bundled service needs Node.js ${MIN_NODE.major}.${MIN_NODE.minor} or newer. Install it, or set changeControl.nodePath to one.`;
  }
  return null;
}

/** Asks `nodePath` for its version; rejects with a ServiceStartError in words when it is missing, not Node.js, or too old. */
export function probeNode(nodePath: string, env: NodeJS.ProcessEnv = process.env, timeoutMs = 15_000): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = '';
    let child: ChildProcess;
    const childEnv: NodeJS.ProcessEnv = { ...env, ELECTRON_RUN_AS_NODE: '1' };
    delete childEnv.NODE_OPTIONS;
    try {
      child = spawn(nodePath, ['-p', 'process.versions.node'], {
        env: childEnv,
        stdio: ['ignore', 'pipe', 'pipe'],
        windowsHide: true,
        timeout: timeoutMs,
      });
    } catch (e) {
      const err = e as NodeJS.ErrnoException;
      reject(new ServiceStartError(explainSpawnFailure(err.code, nodePath, err.message), ''));
      return;
    }
    child.stdout!.setEncoding('utf8').on('data', (d: string) => (out = `${out}${d}`.slice(0, 2000)));
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (out = `${out}${d}`.slice(0, 2000)));
    child.once('error', (e: NodeJS.ErrnoException) =>
      reject(new ServiceStartError(explainSpawnFailure(e.code, nodePath, e.message), out)),
    );
    child.once('close', (code) => {
      const version = out.trim().split(/\r?\n/)[0] ?? '';
      const problem =
        code === 0
          ? checkNodeVersion(version, nodePath)
          : `"${nodePath}" (setting changeControl.nodePath) did not answer as Node.js does (exit code ${code}${version ? `: ${version.slice(0, 80)}` : ''}).`;
      if (problem) reject(new ServiceStartError(problem, out));
      else resolve(version.replace(/^v/, ''));
    });
  });
}

/**
 * Starts the service: first checks that `nodePath` is a Node.js that can run it (missing, not
 * Node.js, or too old: a ServiceStartError saying so), then runs it and waits for its ready line.
 */
export async function launchService(opts: LaunchOptions): Promise<RunningService> {
  let nodeVersion: string;
  try {
    nodeVersion = await probeNode(opts.nodePath, { ...process.env, ...opts.env });
  } catch (e) {
    if (e instanceof ServiceStartError) throw new ServiceStartError(`${START_FAILED} ${e.message}`, e.output);
    throw e;
  }
  return spawnService(opts, nodeVersion);
}

function spawnService(opts: LaunchOptions, nodeVersion: string): Promise<RunningService> {
  mkdirSync(dirname(opts.dbPath), { recursive: true });
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ...SERVICE_ENVIRONMENT,
    ...opts.env,
    CHANGE_CONTROL_ADMIN_TOKEN: opts.adminToken,
    ELECTRON_RUN_AS_NODE: '1',
  };
  // The editor's debugger and loader flags must not reach the service.
  delete env.NODE_OPTIONS;
  delete env.HOST;
  delete env.PORT;
  let child: ChildProcess;
  try {
    child = spawn(
      opts.nodePath,
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
      new ServiceStartError(`${START_FAILED} ${explainSpawnFailure(err.code, opts.nodePath, err.message)}`, ''),
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
        const hint = explainStartFailure(output, opts.nodePath, nodeVersion);
        reject(new ServiceStartError(`${START_FAILED} ${hint ?? why}`, output));
      });

    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      fail(`no "listening on" line within ${opts.startTimeoutMs ?? 60_000} ms`);
    }, opts.startTimeoutMs ?? 60_000);

    lines(child.stdout!, (line) => {
      if (/^admin token:/i.test(line)) return; // never logged
      remember(line);
      const url = parseListeningLine(line);
      if (url) settle(() => resolve(running(child, url, exited)));
    });
    lines(child.stderr!, remember);
    child.once('error', (e: NodeJS.ErrnoException) => fail(explainSpawnFailure(e.code, opts.nodePath, e.message)));
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

function running(child: ChildProcess, url: string, exited: RunningService['exited']): RunningService {
  let stopping: Promise<void> | undefined;
  return {
    url,
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
