import { setFlagsFromString } from 'node:v8';

let enabled = false;

/**
 * Switches on V8's linear-time regular expression engine (the `l` flag), which condition
 * expressions are compiled for (`conditions.ts`). Called once at start-up by `createApp`;
 * importing a module never does it.
 */
export function enableLinearRegExps(): void {
  if (enabled) return;
  setFlagsFromString('--enable-experimental-regexp-engine');
  enabled = true;
}
