import type { Server } from 'node:http';
import { dirname, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { createApp, migrationsOf, PluginError, serverFor } from './app';
import { systemClock } from './host/core/clock';
import { ConfigError, defaultConfig, loadConfigFile, type Config } from './host/core/config';
import { consoleLogger } from './host/core/logger';
import { checkReachable, isPostgresUrl, migrate, openDatabase, type OpenDatabase } from './host/db/database';
import { BackupError, backupDatabase, restoreDatabase } from './host/db/backup';
import { chooseSqliteDriver, SQLITE_DRIVER_ENV } from './host/db/sqlite-driver-choice';
import { defaultPlugins } from './plugins';
import { adminTokenProblem, bootstrapAdmin } from './host/users/bootstrap';

const USAGE = `usage: change-control [--host HOST] [--port PORT] [--db PATH] [--config FILE]
       change-control backup FILE [--db PATH] [--config FILE]
       change-control restore FILE [--db PATH] [--config FILE]

  backup    writes every table of the database to FILE (JSON lines), while the service may run
  restore   replaces the database's data with FILE's (SQLite and PostgreSQL backups restore into either)

  --host    address to listen on (env HOST, default 127.0.0.1)
  --port    port to listen on; 0 picks a free one (env PORT, default 8000)
  --db      SQLite database file or :memory:, or a PostgreSQL URL postgres://USER:PASSWORD@HOST:PORT/DATABASE
            (env DATABASE_URL or CHANGE_CONTROL_DB, default ./data/change-control.sqlite3)
  --config  JSON configuration file (env CHANGE_CONTROL_CONFIG)

  CHANGE_CONTROL_ADMIN_TOKEN   token the superuser "admin" holds, at least 32 characters (otherwise one is generated on first start)
  CHANGE_CONTROL_SQLITE_DRIVER SQLite's driver: better-sqlite3, node (Node's own node:sqlite, 22.16 or newer) or auto
                               (the default: better-sqlite3 when it loads, else node:sqlite)`;

class StartError extends Error {}

interface Options {
  host: string;
  port: number;
  db: string;
  config: string | undefined;
}

function readOptions(argv: string[]): Options {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        host: { type: 'string' },
        port: { type: 'string' },
        db: { type: 'string' },
        config: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
    }));
  } catch (err) {
    throw new StartError(`${(err as Error).message}\n${USAGE}`);
  }
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    process.exit(0);
  }
  const portText = values.port ?? (process.env.PORT || '8000');
  const port = Number(portText);
  if (!/^\d+$/.test(portText) || port > 65535) throw new StartError(`invalid port "${portText}"`);
  return {
    host: values.host ?? (process.env.HOST || '127.0.0.1'),
    port,
    db: values.db ?? (process.env.DATABASE_URL || process.env.CHANGE_CONTROL_DB || './data/change-control.sqlite3'),
    config: values.config ?? (process.env.CHANGE_CONTROL_CONFIG || undefined),
  };
}

/** A database target as it may be shown (a URL's password hidden). */
function describeTarget(target: string): string {
  return isPostgresUrl(target) ? target.replace(/\/\/([^:@/]*):[^@/]*@/, '//$1:***@') : target;
}

/**
 * Opens the database `target` names; on SQLite through the driver CHANGE_CONTROL_SQLITE_DRIVER
 * names (or the one that loads), said in the log. A StartError saying why when it cannot.
 */
function open(target: string): OpenDatabase {
  try {
    if (isPostgresUrl(target)) return openDatabase(target);
    const { driver, reason } = chooseSqliteDriver(process.env[SQLITE_DRIVER_ENV]);
    consoleLogger.info(`SQLite driver: ${driver.name} (${reason})`);
    return openDatabase(target, { sqliteDriver: driver });
  } catch (err) {
    throw new StartError(`cannot open database ${describeTarget(target)}: ${(err as Error).message}`);
  }
}

function listen(server: Server, host: string, port: number): Promise<number> {
  return new Promise((resolvePort, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      const address = server.address();
      resolvePort(typeof address === 'object' && address ? address.port : port);
    });
  });
}

/** `change-control backup FILE` / `restore FILE`: exit 0 when done, 2 with the reason otherwise. */
async function runTool(command: 'backup' | 'restore', argv: string[]): Promise<void> {
  let database: OpenDatabase | undefined;
  try {
    const file = argv[0];
    if (!file || file.startsWith('-')) throw new StartError(`${command} needs a FILE\n${USAGE}`);
    const options = readOptions(argv.slice(1));
    const config = options.config ? loadConfigFile(options.config) : defaultConfig();
    const configDir = options.config ? dirname(resolve(options.config)) : process.cwd();
    database = open(options.db);
    await checkReachable(database);
    if (command === 'backup') {
      const rows = await backupDatabase(database.db, file);
      process.stdout.write(`backed up ${rows} rows of ${describeTarget(options.db)} to ${file}\n`);
    } else {
      await migrate(database.db, migrationsOf(defaultPlugins(config, configDir)));
      const rows = await restoreDatabase(database.db, file);
      process.stdout.write(`restored ${rows} rows from ${file} into ${describeTarget(options.db)}\n`);
    }
    await database.close();
    process.exit(0);
  } catch (err) {
    const known = err instanceof StartError || err instanceof ConfigError || err instanceof BackupError;
    process.stderr.write(`change-control: ${known ? (err as Error).message : ((err as Error).stack ?? String(err))}\n`);
    await database?.close().catch(() => undefined);
    process.exit(2);
  }
}

async function main(): Promise<void> {
  const command = process.argv[2];
  if (command === 'backup' || command === 'restore') return runTool(command, process.argv.slice(3));
  let database: OpenDatabase | undefined;
  let options: Options;
  let config: Config;
  let configDir = process.cwd();
  try {
    options = readOptions(process.argv.slice(2));
    const adminToken = process.env.CHANGE_CONTROL_ADMIN_TOKEN;
    const tokenProblem = adminToken ? adminTokenProblem(adminToken) : null;
    if (tokenProblem) throw new StartError(tokenProblem);
    if (options.config) {
      config = loadConfigFile(options.config);
      configDir = dirname(resolve(options.config));
    } else {
      config = defaultConfig();
    }
    database = open(options.db);
  } catch (err) {
    process.stderr.write(`change-control: ${(err as Error).message}\n`);
    process.exit(2);
  }

  let built;
  try {
    try {
      await checkReachable(database);
    } catch (err) {
      throw new StartError(`cannot open database ${describeTarget(options.db)}: ${(err as Error).message}`);
    }
    built = await createApp({ db: database.db, clock: systemClock, config, log: consoleLogger, configDir });
    const generated = await bootstrapAdmin(
      database.db,
      systemClock,
      process.env.CHANGE_CONTROL_ADMIN_TOKEN || undefined,
    );
    if (generated) process.stdout.write(`admin token: ${generated}\n`);
  } catch (err) {
    const known = err instanceof ConfigError || err instanceof PluginError || err instanceof StartError;
    process.stderr.write(`change-control: ${known ? (err as Error).message : ((err as Error).stack ?? String(err))}\n`);
    await database.close().catch(() => undefined);
    process.exit(2);
  }

  const { app, host, endStreams, allowHost } = built;
  let port: number;
  try {
    const real = serverFor(app, { maxConnections: config.host.max_connections });
    allowHost(options.host);
    port = await listen(real, options.host, options.port);
    for (const task of host.background) task.start();
    process.stdout.write(`listening on http://${options.host}:${port}\n`);

    let stopping = false;
    const stop = async (): Promise<void> => {
      if (stopping) return;
      stopping = true;
      // Event streams never end on their own: end them first, so the stop waits only for real requests.
      endStreams();
      await new Promise<void>((done) => real.close(() => done()));
      for (const task of host.background) await task.stop();
      // What requests or tasks set off and did not await finishes before the database closes.
      await host.unawaited.settled();
      await database.close();
      process.exit(0);
    };
    process.on('SIGTERM', () => void stop());
    process.on('SIGINT', () => void stop());
  } catch (err) {
    process.stderr.write(
      `change-control: cannot listen on ${options.host}:${options.port}: ${(err as Error).message}\n`,
    );
    await database.close().catch(() => undefined);
    process.exit(2);
  }
}

void main();
