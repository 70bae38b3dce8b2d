import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Values the tests of the enclosing `describe` use directly, made in its hooks: each helper returns
 * an object at once and fills it in with the fields of what `prepare` answers (a plain record: an
 * actor, a cast, a world, a scene) before the tests read it, so a suite names what it sets up in
 * one line and its tests keep plain names (`cast.author`, `s.cr.id`).
 */

/** Filled in once, before the first test of the enclosing `describe`. */
export function forSuite<T extends object>(prepare: () => Promise<T>): T {
  const value = {} as T;
  before(async () => {
    Object.assign(value, await prepare());
  });
  return value;
}

/** Filled in afresh before each test of the enclosing `describe`. */
export function forEachTest<T extends object>(prepare: () => Promise<T>): T {
  const value = {} as T;
  beforeEach(async () => {
    Object.assign(value, await prepare());
  });
  return value;
}

/**
 * A fresh temporary directory for each test of the enclosing `describe`, removed after it:
 * `dir()` is the current one, `dir('a', 'b')` a path inside it. Its removal is an `afterEach`
 * hook: call this after the hooks that must stop what uses the directory (they run first).
 */
export function tempDirForEachTest(prefix: string): (...parts: string[]) => string {
  let dir = '';
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), prefix));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));
  return (...parts) => join(dir, ...parts);
}
