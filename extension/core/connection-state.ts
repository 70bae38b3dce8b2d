// The connection to the service as a small closed set of phases. The phase is also the value of
// the `changeControl.connection` context key that the welcome views read, and the problem of an
// offline or failed connection the value of `changeControl.problem` (each has its welcome, with
// the buttons that lead on from it).
import type { CurrentUser } from '../../contract/api/host';

export const CONNECTION_PHASES = ['signedOut', 'starting', 'connecting', 'connected', 'offline', 'failed'] as const;
export type ConnectionPhase = (typeof CONNECTION_PHASES)[number];

/** Why the extension is offline: it tries again by itself, with backoff. */
export const OFFLINE_PROBLEMS = ['unreachable', 'serverError', 'serviceFailed'] as const;
export type OfflineProblem = (typeof OFFLINE_PROBLEMS)[number];
/** Why it failed: only the user can mend it (sign in again, fix the settings). */
export const FAILED_PROBLEMS = ['tokenRefused', 'invalidSettings'] as const;
export type FailedProblem = (typeof FAILED_PROBLEMS)[number];
export type ConnectionProblem = OfflineProblem | FailedProblem;

export type ConnectionState =
  | { phase: 'signedOut'; serviceUrl: string | null; bundled: boolean }
  | { phase: 'starting' }
  | { phase: 'connecting'; serviceUrl: string; bundled: boolean }
  | { phase: 'connected'; serviceUrl: string; bundled: boolean; user: CurrentUser }
  | {
      phase: 'offline';
      serviceUrl: string | null;
      bundled: boolean;
      problem: OfflineProblem;
      /** What went wrong, in words (the last attempt's). */
      message: string;
      /** Who was signed in before the service went away (null when never connected). */
      user: CurrentUser | null;
    }
  | { phase: 'failed'; serviceUrl: string | null; bundled: boolean; problem: FailedProblem; message: string };

/** The short words every view and the status bar use for an offline connection. */
export const OFFLINE_WORDS = 'offline, reconnecting…';

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
    case 'offline':
      return OFFLINE_WORDS;
    case 'failed':
      return state.problem === 'tokenRefused' ? 'sign-in refused' : 'not connected';
  }
}

/** Why forms that would post are disabled, or null when they may post. */
export function postingBlockedReason(state: ConnectionState): string | null {
  switch (state.phase) {
    case 'connected':
      return null;
    case 'offline':
      return `Offline: the Change Control service ${state.problem === 'serviceFailed' ? 'bundled with the extension is not running' : 'does not answer'} (${state.message}). Reconnecting by itself; what you typed is kept.`;
    case 'failed':
      return `Not connected: ${state.message}`;
    case 'signedOut':
      return 'Not signed in to the Change Control service.';
    case 'starting':
    case 'connecting':
      return 'Connecting to the Change Control service…';
  }
}

/** The status bar's words and hover for the connection (null while connected: the review count shows instead). */
export function connectionStatus(state: ConnectionState): { text: string; tooltip: string; warning: boolean } | null {
  switch (state.phase) {
    case 'connected':
      return null;
    case 'offline':
      return {
        text: `$(debug-disconnect) Change Control: ${OFFLINE_WORDS}`,
        tooltip: `${postingBlockedReason(state)}\nClick to try again now.`,
        warning: true,
      };
    case 'failed':
      return { text: '$(error) Change Control: not connected', tooltip: state.message, warning: true };
    case 'signedOut':
      return {
        text: '$(account) Change Control: sign in',
        tooltip: 'Not signed in to the Change Control service.',
        warning: false,
      };
    case 'starting':
    case 'connecting':
      return {
        text: '$(sync~spin) Change Control: connecting…',
        tooltip: connectionDescription(state),
        warning: false,
      };
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

/** The problem of an offline or failed connection (the `changeControl.problem` context key), or '' for none. */
export function problemOf(state: ConnectionState): ConnectionProblem | '' {
  return state.phase === 'offline' || state.phase === 'failed' ? state.problem : '';
}
