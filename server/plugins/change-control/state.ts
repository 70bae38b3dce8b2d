import type { HostServices } from '../../host';

/**
 * Per-host state of the change-control plugin (one per service instance, so tests that
 * start several services never share it). Parts of the plugin add their own slots.
 */
export interface ChangeControlState {
  [slot: string]: unknown;
}

const states = new WeakMap<HostServices, ChangeControlState>();

export function pluginState(host: HostServices): ChangeControlState {
  let state = states.get(host);
  if (!state) {
    state = {};
    states.set(host, state);
  }
  return state;
}

/** A typed slot of the plugin state, created on first use. */
export function stateSlot<T>(host: HostServices, name: string, create: () => T): T {
  const state = pluginState(host);
  if (!(name in state)) state[name] = create();
  return state[name] as T;
}
