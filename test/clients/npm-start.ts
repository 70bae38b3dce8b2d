// The service as `npm start` starts it, for the tests that drive it as its users do (a real
// NetBox client, the README's tour): on a free port, with a fresh data folder.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const ROOT = resolve(__dirname, '../..');

export interface StartedService {
  /** The base URL, once the service listens. */
  url: Promise<string>;
  /** Stops the whole group npm start made (npm, its shell, node) and removes the data folder. */
  stop(): void;
}

export function npmStart(adminToken: string): StartedService {
  const dataDir = mkdtempSync(join(tmpdir(), 'cc-npm-start-'));
  const child: ChildProcess = spawn(
    'npm',
    ['start', '--', '--port', '0', '--db', join(dataDir, 'change-control.sqlite3')],
    {
      cwd: ROOT,
      env: { ...process.env, CHANGE_CONTROL_ADMIN_TOKEN: adminToken, PORT: '' },
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  const url = new Promise<string>((resolveUrl, reject) => {
    const seen = (chunk: Buffer) => {
      output += chunk.toString();
      const found = /listening on (http:\/\/\S+)/.exec(output);
      if (found) resolveUrl(found[1]!);
    };
    child.stdout!.on('data', seen);
    child.stderr!.on('data', seen);
    child.on('exit', (code) => reject(new Error(`npm start exited (${code}):\n${output}`)));
  });
  return {
    url,
    stop: () => {
      try {
        process.kill(-child.pid!, 'SIGTERM');
      } catch {
        /* already gone */
      }
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
