import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { SERVICE_ENVIRONMENT, SERVICE_NODE_OPTIONS } from '../launch/service-launch';

export const REPO = join(__dirname, '..');

export interface RunningService {
  url: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

/** Starts a Node script that prints `listening on http://HOST:PORT` once it accepts connections. */
export async function startProcess(
  script: string,
  args: string[],
  env: Record<string, string> = {},
  nodeOptions: readonly string[] = [],
): Promise<RunningService> {
  // BENCH_NODE_ARGS, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof", profiles the processes under load.
  const nodeArgs = [...nodeOptions, ...(process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean)];
  const child = spawn(process.execPath, [...nodeArgs, script, ...args], {
    cwd: REPO,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      // BENCH_SERVICE_STDOUT=file keeps what the processes print (with BENCH_NODE_ARGS=--trace-gc: each collection).
      if (process.env.BENCH_SERVICE_STDOUT) appendFileSync(process.env.BENCH_SERVICE_STDOUT, d);
      out += d.toString();
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) resolve(m[1]!);
    });
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code} before listening: ${stderr}`)));
  });
  // A process that dies while being measured says why (its last output) instead of leaving only "other side closed".
  let stopping = false;
  child.once('exit', (code, signal) => {
    if (!stopping)
      process.stderr.write(`[bench] ${script} exited (${code ?? signal}) while in use:\n${stderr.slice(-4000)}\n`);
  });
  return {
    url,
    child,
    stop: async () => {
      stopping = true;
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      await once(child, 'exit');
    },
  };
}

/** The built service (dist/server.js) on a free port with its own database and configuration, started as `npm start` starts it. */
export function startService(db: string, config: string, adminToken: string): Promise<RunningService> {
  return startProcess(
    join(REPO, 'dist', 'server.js'),
    ['--port', '0', '--db', db, '--config', config],
    { ...SERVICE_ENVIRONMENT, CHANGE_CONTROL_ADMIN_TOKEN: adminToken },
    SERVICE_NODE_OPTIONS,
  );
}

/** A trivial Express JSON route in its own process: the ceiling every scenario is measured against. */
export function startCeiling(): Promise<RunningService> {
  return startProcess(join(REPO, 'bench', 'ceiling-server.cjs'), []);
}
