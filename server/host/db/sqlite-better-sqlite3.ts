import type BetterSqlite3 from 'better-sqlite3';
import type { SqliteConnection, SqliteDriver } from './sqlite-driver';

let loaded: typeof BetterSqlite3 | undefined;
let loadProblem: string | null | undefined;

/**
 * better-sqlite3, loaded the first time it is asked for: the extension's package holds no native
 * module, and its service (on `node:sqlite`) never loads it.
 */
function load(): typeof BetterSqlite3 {
  // A require at the point of use: the bundle runs the module only when called.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  loaded ??= require('better-sqlite3') as typeof BetterSqlite3;
  return loaded;
}

/** better-sqlite3, whose API is the service's (`SqliteConnection`). */
export const betterSqlite3: SqliteDriver = {
  name: 'better-sqlite3',
  open: (path, options) => new (load())(path, options) as unknown as SqliteConnection,
  problem() {
    if (loadProblem === undefined) {
      try {
        // The native file is loaded by the first connection, not by the require: open one.
        new (load())(':memory:').close();
        loadProblem = null;
      } catch (err) {
        loadProblem = `better-sqlite3 cannot be loaded: ${(err as Error).message}`;
      }
    }
    return loadProblem;
  },
  threadModule: () => require.resolve('better-sqlite3'),
};
