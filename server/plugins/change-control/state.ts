import type { Host } from '../../host/core/host';

/**
 * Per-host state of the change-control plugin (one per service instance, so tests that
 * start several services never share it). Parts of the plugin add their own slots.
 */
export interface ChangeControlState {
  [slot: string]: unknown;
}

const states = new WeakMap<Host, ChangeControlState>();

export function pluginState(host: Host): ChangeControlState {
  let state = states.get(host);
  if (!state) {
    state = {};
    states.set(host, state);
  }
  return state;
}

/** A typed slot of the plugin state, created on first use. */
export function stateSlot<T>(host: Host, name: string, create: () => T): T {
  const state = pluginState(host);
  if (!(name in state)) state[name] = create();
  return state[name] as T;
}
