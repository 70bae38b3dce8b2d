// Starts the companion service bundled with the extension as a child process:
//   <node> <extensionPath>/dist/server.js --host 127.0.0.1 --port 0 --db <file>
// with CHANGE_CONTROL_ADMIN_TOKEN set, waits for its `listening on http://HOST:PORT` line, and
// stops it with SIGTERM (then SIGKILL). A separate Node runs it because the native SQLite module
// is built for that Node, not for the editor's own runtime. No VS Code here.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';

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

/** Why a start failed, in words a user can act on. */
export function explainStartFailure(output: string, nodePath: string): string | null {
  if (/NODE_MODULE_VERSION|was compiled against a different Node\.js version|ERR_DLOPEN_FAILED/.test(output)) {
    return `the SQLite module does not match the Node.js at "${nodePath}". Set changeControl.nodePath to a Node.js 20 or newer matching the one the extension was built with.`;
  }
  if (/Cannot find module .*better-sqlite3/.test(output)) return 'the packaged SQLite module is missing from the extension.';
  return null;
}

export function launchService(opts: LaunchOptions): Promise<RunningService> {
  mkdirSync(dirname(opts.dbPath), { recursive: true });
  const env: NodeJS.ProcessEnv = { ...process.env, ...opts.env, CHANGE_CONTROL_ADMIN_TOKEN: opts.adminToken, ELECTRON_RUN_AS_NODE: '1' };
  // The editor's debugger and loader flags must not reach the service.
  delete env.NODE_OPTIONS;
  delete env.HOST;
  delete env.PORT;
  let child: ChildProcess;
  try {
    child = spawn(opts.nodePath, [opts.serverScript, '--host', '127.0.0.1', '--port', '0', '--db', opts.dbPath], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
      windowsHide: true,
    });
  } catch (e) {
    return Promise.reject(new ServiceStartError(`could not run "${opts.nodePath}": ${(e as Error).message}`, ''));
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
        const hint = explainStartFailure(output, opts.nodePath);
        reject(new ServiceStartError(`the bundled service did not start: ${hint ?? why}`, output));
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
    child.once('error', (e) => fail(`could not run "${opts.nodePath}": ${e.message}`));
    void exited.then(({ code, signal }) => fail(`it exited (${signal ?? `code ${code}`})`));
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
