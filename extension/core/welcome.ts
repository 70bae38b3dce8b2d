// The welcome content of each view, per connection state, as data: package.json's `viewsWelcome`
// is exactly `welcomeContributions()` (test/extension/manifest.test.ts), and which welcome shows in
// which state is decided by `welcomeFor()` (test/extension/welcome.test.ts). VS Code shows a
// view's welcome (and its buttons) only while the view has no rows and no `message`: the views
// leave both empty whenever they are not connected, so that the way forward always shows.
import { CONTEXT_KEYS, VIEWS, type ViewKey } from './commands';
import type { ConnectionProblem, FailedProblem, OfflineProblem } from './connection-state';

/** The states a welcome is for: the phase, and the problem of an offline or failed connection. */
export type WelcomeState =
  'connecting' | 'signedOut' | 'connected' | `offline:${OfflineProblem}` | `failed:${FailedProblem}`;

export const WELCOME_STATES: readonly WelcomeState[] = [
  'connecting',
  'signedOut',
  'connected',
  'offline:unreachable',
  'offline:serverError',
  'offline:serviceFailed',
  'failed:tokenRefused',
  'failed:invalidSettings',
];

/** Boolean context keys a welcome may also depend on (connected views only). */
export type WelcomeFlag = typeof CONTEXT_KEYS.empty | typeof CONTEXT_KEYS.noBranches;

interface WelcomeDef {
  view: ViewKey;
  states: readonly WelcomeState[];
  /** Flags that must hold (true) or not hold (false). */
  flags?: Partial<Record<WelcomeFlag, boolean>>;
  contents: string;
}

/** The buttons of the welcomes (links to commands). */
export const WELCOME_BUTTONS = {
  signIn: '[Sign In](command:changeControl.signIn)',
  retry: '[Retry](command:changeControl.refresh)',
  showLogs: '[Show Logs](command:changeControl.showLogs)',
  openSettings: '[Open Settings](command:changeControl.openSettings?%5B%22changeControl%22%5D)',
  openNodeSetting: '[Open Settings](command:changeControl.openSettings?%5B%22changeControl.nodePath%22%5D)',
  useRemoteServer: '[Use a Remote Server](command:changeControl.useRemoteServer)',
  openChangeRequestForBranch: '[Open Change Request for Branch](command:changeControl.openChangeRequestForBranch)',
  createBranch: '[Create Branch](command:changeControl.createBranch)',
  openAllChanges: '[Open All Changes](command:changeControl.openAllChanges)',
  showBranchObjects: '[Show Branch Objects](command:changeControl.showBranchObjects)',
} as const;
const B = WELCOME_BUTTONS;

const CONNECTING: readonly WelcomeState[] = ['connecting'];
const OFFLINE_ELSEWHERE: readonly WelcomeState[] = ['offline:unreachable', 'offline:serverError'];
const OFFLINE_ANY: readonly WelcomeState[] = [...OFFLINE_ELSEWHERE, 'offline:serviceFailed'];

/** The welcome of a view other than Change Requests, whatever it is about, while not connected. */
function notConnected(view: ViewKey, what: string): WelcomeDef[] {
  return [
    { view, states: CONNECTING, contents: 'Connecting to the Change Control service…' },
    { view, states: ['signedOut'], contents: `Sign in to see ${what}.\n${B.signIn}` },
    {
      view,
      states: OFFLINE_ANY,
      contents: `Offline, reconnecting… ${capitalised(what)} show again once the Change Control service answers.\n${B.retry}\n${B.showLogs}`,
    },
    {
      view,
      states: ['failed:tokenRefused'],
      contents: `The Change Control service refused your stored sign-in: sign in again to see ${what}.\n${B.signIn}\n${B.showLogs}`,
    },
    {
      view,
      states: ['failed:invalidSettings'],
      contents: `Not connected: the Change Control: Server Url setting is not a URL the extension can use.\n${B.openSettings}`,
    },
  ];
}

function capitalised(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}

export const WELCOMES: readonly WelcomeDef[] = [
  { view: 'changeRequests', states: CONNECTING, contents: 'Connecting to the Change Control service…' },
  {
    view: 'changeRequests',
    states: ['signedOut'],
    contents: `You are not connected to the Change Control service.\n${B.signIn}\nThe service is set by the Change Control: Server Url setting; leave it empty to use the service bundled with the extension.\n${B.openSettings}\n${B.useRemoteServer}`,
  },
  {
    view: 'changeRequests',
    states: OFFLINE_ELSEWHERE,
    contents: `Offline, reconnecting…\nThe Change Control service does not answer. The extension tries again every few seconds and shows everything again once it answers; the status bar item says why.\n${B.retry}\n${B.showLogs}\nThe service is set by the Change Control: Server Url setting.\n${B.openSettings}\n${B.useRemoteServer}`,
  },
  {
    view: 'changeRequests',
    states: ['offline:serviceFailed'],
    contents: `Offline, reconnecting…\nThe Change Control service bundled with the extension is not running: it could not start, or it stopped. It is started again every few seconds; the notification, the status bar item and the log say why.\n${B.showLogs}\n${B.retry}\n${B.useRemoteServer}\nThe bundled service runs on the editor's own runtime, or on the Node.js of the Change Control: Node Path setting when it is set (22.16 or newer).\n${B.openNodeSetting}`,
  },
  {
    view: 'changeRequests',
    states: ['failed:tokenRefused'],
    contents: `The Change Control service refused your stored sign-in (the token was revoked, expired or belongs to another service). Sign in again.\n${B.signIn}\n${B.showLogs}`,
  },
  {
    view: 'changeRequests',
    states: ['failed:invalidSettings'],
    contents: `The Change Control: Server Url setting is not a URL the extension can use: fix it, or leave it empty to use the service bundled with the extension.\n${B.openSettings}\n${B.useRemoteServer}`,
  },
  {
    view: 'changeRequests',
    states: ['connected'],
    flags: { [CONTEXT_KEYS.empty]: true, [CONTEXT_KEYS.noBranches]: false },
    contents: `There are no change requests yet.\n${B.openChangeRequestForBranch}`,
  },
  {
    view: 'changeRequests',
    states: ['connected'],
    flags: { [CONTEXT_KEYS.empty]: true, [CONTEXT_KEYS.noBranches]: true },
    contents: `There are no change requests and no branches yet. Create a branch, write your changes to it, then open its change request.\n${B.createBranch}`,
  },
  ...notConnected('checks', 'the checks of change requests'),
  { view: 'checks', states: ['connected'], contents: 'Select a change request to see its checks.' },
  ...notConnected('myReviews', 'the change requests waiting for your review'),
  {
    view: 'myReviews',
    states: ['connected'],
    contents: 'Loading the change requests waiting for your review…',
  },
  ...notConnected('mergeQueue', 'the requests in the merge queue'),
  {
    view: 'mergeQueue',
    states: ['connected'],
    contents:
      'No change request waits in the merge queue. A request set to merge automatically joins it once it is ready.',
  },
  ...notConnected('branchObjects', 'the objects of branches'),
  {
    view: 'branchObjects',
    states: ['connected'],
    contents: `Edit the objects of a branch here: each opens as a YAML document, and saving writes it into the branch.\n${B.showBranchObjects}\n${B.createBranch}`,
  },
  ...notConnected('changedObjects', 'the changes of change requests'),
  {
    view: 'changedObjects',
    states: ['connected'],
    contents: `Select a change request, or run Open All Changes, to walk its changed objects here.\n${B.openAllChanges}`,
  },
];

const K = CONTEXT_KEYS;

function stateClause(state: WelcomeState): string {
  if (state === 'connecting') return `!${K.connection} || ${K.connection} == starting || ${K.connection} == connecting`;
  const [phase, problem] = state.split(':');
  return problem ? `${K.connection} == ${phase} && ${K.problem} == ${problem}` : `${K.connection} == ${phase}`;
}

/** The `when` clause of a welcome: any of its states, and its flags. */
export function welcomeWhen(def: Pick<WelcomeDef, 'states' | 'flags'>): string {
  const flags = Object.entries(def.flags ?? {})
    .map(([key, on]) => (on ? key : `!${key}`))
    .join(' && ');
  return def.states
    .flatMap((s) => stateClause(s).split(' || '))
    .map((c) => (flags ? `${c} && ${flags}` : c))
    .join(' || ');
}

/** package.json's `viewsWelcome`. */
export function welcomeContributions(): { view: string; when: string; contents: string }[] {
  return WELCOMES.map((w) => ({ view: VIEWS[w.view].id, when: welcomeWhen(w), contents: w.contents }));
}

/** The welcomes a view shows in a state (VS Code shows every one whose clause holds). */
export function welcomeFor(
  view: ViewKey,
  state: WelcomeState,
  flags: Partial<Record<WelcomeFlag, boolean>> = {},
): WelcomeDef[] {
  return WELCOMES.filter(
    (w) =>
      w.view === view &&
      w.states.includes(state) &&
      Object.entries(w.flags ?? {}).every(([key, on]) => (flags[key as WelcomeFlag] ?? false) === on),
  );
}

/** The welcome state of a connection phase and problem. */
export function welcomeState(phase: string | undefined, problem: ConnectionProblem | ''): WelcomeState {
  if (phase === 'signedOut' || phase === 'connected') return phase;
  if (phase === 'offline' || phase === 'failed') return `${phase}:${problem}` as WelcomeState;
  return 'connecting';
}
