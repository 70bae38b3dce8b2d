// Every view shows a way forward in every state it can be in: one welcome per state, with the
// buttons that lead on from it (package.json's viewsWelcome is exactly these: manifest.test.ts).
import assert from 'node:assert/strict';
import { CONTEXT_KEYS, VIEWS, type ViewKey } from '../../extension/core/commands';
import {
  connectionDescription,
  connectionStatus,
  postingBlockedReason,
  OFFLINE_WORDS,
} from '../../extension/core/connection-state';
import {
  WELCOME_BUTTONS as B,
  WELCOME_STATES,
  welcomeFor,
  welcomeState,
  welcomeWhen,
  type WelcomeState,
} from '../../extension/core/welcome';
import { makeUser } from './fixtures';

const VIEW_KEYS = Object.keys(VIEWS) as ViewKey[];
const NOT_CONNECTED = WELCOME_STATES.filter((s) => s !== 'connected');

function only(view: ViewKey, state: WelcomeState, flags = {}): string {
  const shown = welcomeFor(view, state, flags);
  assert.equal(shown.length, 1, `${view} in ${state}: ${shown.length} welcomes`);
  return shown[0]!.contents;
}

describe('extension: every view has its way forward', () => {
  it('every view shows exactly one welcome in every state but connected (where its rows or its own welcome show)', () => {
    for (const view of VIEW_KEYS) for (const state of NOT_CONNECTED) only(view, state);
  });

  it('offline, every view says "offline, reconnecting…" and offers Retry and Show Logs', () => {
    for (const view of VIEW_KEYS)
      for (const state of ['offline:unreachable', 'offline:serverError', 'offline:serviceFailed'] as const) {
        const text = only(view, state);
        assert.match(text, /^Offline, reconnecting…/, `${view} ${state}`);
        assert.ok(text.includes(B.retry) && text.includes(B.showLogs), `${view} ${state}`);
      }
  });

  it('the Change Requests view leads on from each failure: the bundled service with Show Logs, Retry, Use a Remote Server and its Node setting; an unreachable service with Retry, Show Logs, Open Settings and Use a Remote Server', () => {
    const bundled = only('changeRequests', 'offline:serviceFailed');
    for (const b of [B.showLogs, B.retry, B.useRemoteServer, B.openNodeSetting]) assert.ok(bundled.includes(b), b);
    for (const state of ['offline:unreachable', 'offline:serverError'] as const) {
      const text = only('changeRequests', state);
      for (const b of [B.retry, B.showLogs, B.openSettings, B.useRemoteServer]) assert.ok(text.includes(b), b);
    }
    assert.ok(only('changeRequests', 'failed:invalidSettings').includes(B.openSettings));
  });

  it('only a user who must sign in is asked to: signed out or with a refused token, never otherwise', () => {
    for (const view of VIEW_KEYS)
      for (const state of WELCOME_STATES) {
        const asks = welcomeFor(view, state, { [CONTEXT_KEYS.empty]: true }).some((w) => w.contents.includes(B.signIn));
        assert.equal(asks, state === 'signedOut' || state === 'failed:tokenRefused', `${view} in ${state}`);
      }
  });

  it('the first-run empty state offers Create Branch when there is no branch, Open Change Request for Branch otherwise', () => {
    const none = only('changeRequests', 'connected', { [CONTEXT_KEYS.empty]: true, [CONTEXT_KEYS.noBranches]: true });
    assert.ok(none.includes(B.createBranch));
    const some = only('changeRequests', 'connected', { [CONTEXT_KEYS.empty]: true });
    assert.ok(some.includes(B.openChangeRequestForBranch));
    assert.deepEqual(welcomeFor('changeRequests', 'connected'), [], 'a list with requests shows no welcome');
  });

  it('when clauses name the phase and the problem; the state of a phase and problem is the one they name', () => {
    assert.equal(
      welcomeWhen({ states: ['offline:serviceFailed'] }),
      'changeControl.connection == offline && changeControl.problem == serviceFailed',
    );
    assert.equal(
      welcomeWhen({ states: ['connected'], flags: { [CONTEXT_KEYS.empty]: true, [CONTEXT_KEYS.noBranches]: false } }),
      'changeControl.connection == connected && changeControl.empty && !changeControl.noBranches',
    );
    assert.equal(welcomeState('offline', 'unreachable'), 'offline:unreachable');
    assert.equal(welcomeState(undefined, ''), 'connecting');
    assert.equal(welcomeState('starting', ''), 'connecting');
  });

  it('the description, the status bar and the reason forms are disabled say "offline, reconnecting…" and why', () => {
    const offline = {
      phase: 'offline',
      serviceUrl: 'http://127.0.0.1:18000',
      bundled: false,
      problem: 'unreachable',
      message: 'http://127.0.0.1:18000: ECONNREFUSED',
      user: null,
    } as const;
    assert.equal(connectionDescription(offline), OFFLINE_WORDS);
    assert.match(connectionStatus(offline)!.text, /offline, reconnecting…/);
    assert.match(connectionStatus(offline)!.tooltip, /ECONNREFUSED/);
    assert.match(postingBlockedReason(offline)!, /^Offline: .*ECONNREFUSED.*what you typed is kept/);
    assert.equal(
      postingBlockedReason({
        phase: 'connected',
        serviceUrl: 'x',
        bundled: false,
        user: makeUser({ id: 1, username: 'bob' }),
      }),
      null,
    );
  });
});
