import type * as Pg from 'pg';

let driver: typeof Pg | undefined;

/**
 * The PostgreSQL driver, loaded the first time a PostgreSQL database is opened: a service on
 * SQLite never loads it (loading it, and the fetch implementation it looks for, took about a
 * tenth of the start-up).
 */
export function pgDriver(): typeof Pg {
  // A require at the point of use: the bundle runs the driver's module only when called.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  driver ??= require('pg') as typeof Pg;
  return driver;
}
