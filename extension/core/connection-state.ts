// The connection to the service as a small closed set of phases. The phase is also the value of
// the `changeControl.connection` context key that the welcome views read.
import type { CurrentUser } from '../../contract/api/host';

export const CONNECTION_PHASES = ['signedOut', 'starting', 'connecting', 'connected', 'failed'] as const;
export type ConnectionPhase = (typeof CONNECTION_PHASES)[number];

export type ConnectionState =
  | { phase: 'signedOut'; serviceUrl: string | null; bundled: boolean }
  | { phase: 'starting' }
  | { phase: 'connecting'; serviceUrl: string; bundled: boolean }
  | { phase: 'connected'; serviceUrl: string; bundled: boolean; user: CurrentUser }
  | { phase: 'failed'; serviceUrl: string | null; bundled: boolean; message: string };

/** A short line for the Change Requests view's description. */
export function connectionDescription(state: ConnectionState): string {
  switch (state.phase) {
    case 'signedOut':
      return 'not signed in';
    case 'starting':
      return 'starting the bundled service…';
    case 'connecting':
      return 'connecting…';
    case 'connected':
      return `${state.user.username} · ${state.bundled ? 'bundled service' : hostOf(state.serviceUrl)}`;
    case 'failed':
      return 'not connected';
  }
}

export function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}

export function isConnected(state: ConnectionState): state is Extract<ConnectionState, { phase: 'connected' }> {
  return state.phase === 'connected';
}
