import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';

const ROOT = resolve(__dirname, '../../..');

export interface Started {
  child: ChildProcess;
  url: string;
  stdout: () => string;
  stderr: () => string;
}

const SERVICE_VARS = [
  'PORT',
  'HOST',
  'DATABASE_URL',
  'CHANGE_CONTROL_DB',
  'CHANGE_CONTROL_CONFIG',
  'CHANGE_CONTROL_ADMIN_TOKEN',
];

/** The test runner's environment without the service's own variables, plus the given ones. */
function serviceEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of SERVICE_VARS) delete env[name];
  return { ...env, ...extra };
}

/** Runs `server/main.ts` as `npm start` would, with the given arguments and environment. */
export function spawnService(args: string[], env: Record<string, string> = {}): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', resolve(ROOT, 'server/main.ts'), ...args], {
    cwd: ROOT,
    env: serviceEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

function collect(child: ChildProcess): { out: () => string; err: () => string } {
  let out = '';
  let err = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (err += d.toString()));
  return { out: () => out, err: () => err };
}

/** Waits for the `listening on http://HOST:PORT` line. */
export async function startAndWait(args: string[], env: Record<string, string> = {}): Promise<Started> {
  const child = spawnService(args, env);
  const { out, err } = collect(child);
  const url = await new Promise<string>((resolveUrl, reject) => {
    const timer = setTimeout(() => reject(new Error(`service did not start: ${err()}`)), 20_000);
    child.stdout?.on('data', () => {
      const m = /listening on (http:\/\/\S+)/.exec(out());
      if (m) {
        clearTimeout(timer);
        resolveUrl(m[1]!);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`service exited with ${code}: ${err()}`));
    });
  });
  return { child, url, stdout: out, stderr: err };
}

/** Runs the service expecting it to exit; returns the exit code and output. */
export async function runToExit(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawnService(args, env);
  const { out, err } = collect(child);
  const code = await new Promise<number | null>((done) => child.once('exit', (c) => done(c)));
  return { code, stdout: out(), stderr: err() };
}

export function waitForExit(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((done) => child.once('exit', (c) => done(c)));
}
