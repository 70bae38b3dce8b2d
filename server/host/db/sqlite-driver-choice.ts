import { betterSqlite3 } from './sqlite-better-sqlite3';
import type { SqliteDriver } from './sqlite-driver';
import { nodeSqlite } from './sqlite-node';

/** The environment variable that names the driver: `better-sqlite3`, `node` (or `node:sqlite`), or `auto` (the default). */
export const SQLITE_DRIVER_ENV = 'CHANGE_CONTROL_SQLITE_DRIVER';

export interface ChosenSqliteDriver {
  driver: SqliteDriver;
  /** Why this one, for the service's log. */
  reason: string;
}

/** A problem on one line, for the log. */
const oneLine = (text: string) => text.replace(/\s+/g, ' ').trim();

/**
 * The driver `asked` names (the value of CHANGE_CONTROL_SQLITE_DRIVER): a named driver must load
 * (else an error saying why); `auto` or nothing takes better-sqlite3 when it loads (`npm start`),
 * else `node:sqlite` (a runtime the native module was not built for, or a package without it: the
 * extension's), else an error naming both reasons.
 */
export function chooseSqliteDriver(asked: string | undefined): ChosenSqliteDriver {
  const value = (asked ?? '').trim().toLowerCase();
  const named = (driver: SqliteDriver): ChosenSqliteDriver => {
    const problem = driver.problem();
    if (problem) throw new Error(`no SQLite driver: ${SQLITE_DRIVER_ENV}=${asked}, but ${oneLine(problem)}`);
    return { driver, reason: `${SQLITE_DRIVER_ENV}=${asked}` };
  };
  if (value === 'better-sqlite3') return named(betterSqlite3);
  if (value === 'node' || value === 'node:sqlite') return named(nodeSqlite);
  if (value !== '' && value !== 'auto')
    throw new Error(`${SQLITE_DRIVER_ENV}=${asked}: expected better-sqlite3, node or auto`);
  const native = betterSqlite3.problem();
  if (!native) return { driver: betterSqlite3, reason: 'it loads' };
  const builtin = nodeSqlite.problem();
  if (!builtin) return { driver: nodeSqlite, reason: oneLine(native) };
  throw new Error(`no SQLite driver: ${oneLine(native)}; and ${builtin}`);
}

let chosen: ChosenSqliteDriver | undefined;

/** This process's driver, chosen once from CHANGE_CONTROL_SQLITE_DRIVER (`chooseSqliteDriver`). */
export function processSqliteDriver(): ChosenSqliteDriver {
  chosen ??= chooseSqliteDriver(process.env[SQLITE_DRIVER_ENV]);
  return chosen;
}
