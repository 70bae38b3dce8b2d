import { dropTestSchemas } from './database';

/** Mocha's root hooks: the PostgreSQL schemas the tests made are dropped once all have run. */
export const mochaHooks = {
  async afterAll(): Promise<void> {
    await dropTestSchemas();
  },
};
