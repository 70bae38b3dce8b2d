// The connection's decisions on a manual clock: going offline when the service goes away (at once
// when the stream or a call drops, within a probe interval otherwise), retrying with backoff from
// every state the service can heal from, and what a retry shows.
import assert from 'node:assert/strict';
import {
  ConnectionMachine,
  problemOfError,
  type AttemptOutcome,
  type ProbeResult,
} from '../../extension/core/connection-machine';
import type { ConnectionState } from '../../extension/core/connection-state';
import { FakeClock, settle } from './fake-clock';
import { makeUser } from './fixtures';

const URL = 'http://127.0.0.1:18000';
const bob = makeUser({ id: 7, username: 'bob' });
const connected: AttemptOutcome = { kind: 'connected', serviceUrl: URL, bundled: false, user: bob };
const refused: AttemptOutcome = {
  kind: 'offline',
  problem: 'unreachable',
  serviceUrl: URL,
  bundled: false,
  message: `${URL}: ECONNREFUSED`,
};

/** A service that answers or not, as the test says; and a machine over it on a manual clock. */
function world(opts: { service?: 'up' | 'down'; outcomeWhenDown?: AttemptOutcome } = {}) {
  const clock = new FakeClock();
  let up = (opts.service ?? 'up') === 'up';
  const states: { at: number; state: ConnectionState }[] = [];
  let attempts = 0;
  let probes = 0;
  const machine = new ConnectionMachine({
    timers: clock,
    attempt: async (progress) => {
      attempts += 1;
      progress({ phase: 'connecting', serviceUrl: URL, bundled: false });
      return up ? connected : (opts.outcomeWhenDown ?? refused);
    },
    probe: async (): Promise<ProbeResult> => {
      probes += 1;
      return up ? { ok: true } : { ok: false, problem: 'unreachable', message: `${URL}: ECONNREFUSED` };
    },
    onState: (state) => states.push({ at: clock.now, state }),
  });
  return {
    clock,
    machine,
    states,
    get attempts() {
      return attempts;
    },
    get probes() {
      return probes;
    },
    set up(v: boolean) {
      up = v;
    },
    phases: () => states.map((s) => s.state.phase),
    /** When the machine last entered `phase`. */
    enteredAt: (phase: ConnectionState['phase']) => [...states].reverse().find((s) => s.state.phase === phase)?.at,
  };
}

describe('extension: the connection state machine', () => {
  it('connected, the service goes away: the stream dropping makes it offline at once (a probe confirms), keeping who was signed in', async () => {
    const w = world();
    await w.machine.connect();
    w.machine.streamChanged(true);
    await w.clock.advance(60_000);
    assert.equal(w.probes, 0, 'an open stream is the watch: no probes');
    w.up = false;
    w.machine.streamChanged(false);
    await settle();
    const state = w.machine.state;
    assert.equal(state.phase, 'offline');
    assert.equal(state.phase === 'offline' && state.user?.id, 7);
    assert.equal(state.phase === 'offline' && state.problem, 'unreachable');
    assert.equal(w.enteredAt('offline'), 60_000);
  });

  it('connected without a stream, the service goes away: a probe says so within 3 s', async () => {
    const w = world();
    await w.machine.connect();
    await w.clock.advance(10_000);
    assert.equal(w.machine.state.phase, 'connected');
    assert.ok(w.probes >= 3, `probes: ${w.probes}`);
    w.up = false;
    const gone = w.clock.now;
    await w.clock.advance(5_000);
    assert.equal(w.machine.state.phase, 'offline');
    assert.ok(w.enteredAt('offline')! - gone <= 3_000, `offline after ${w.enteredAt('offline')! - gone} ms`);
  });

  it('offline: it retries with backoff (2 s, then every 3 s), stays quietly offline while retries fail, and connects within 3 s of the service answering', async () => {
    const w = world();
    await w.machine.connect();
    w.up = false;
    w.machine.callFailed({ kind: 'unreachable' });
    await settle();
    assert.equal(w.machine.state.phase, 'offline');
    const before = w.attempts;
    assert.deepEqual(w.clock.waiting, [2_000]);
    await w.clock.advance(2_000);
    assert.deepEqual(w.clock.waiting, [3_000]);
    await w.clock.advance(60_000);
    assert.equal(w.attempts - before, 1 + 20, 'one retry at 2 s, then one every 3 s');
    assert.deepEqual(w.phases(), ['connecting', 'connected', 'offline'], 'a failing retry changes nothing shown');
    w.up = true;
    const back = w.clock.now;
    await w.clock.advance(3_000);
    assert.equal(w.machine.state.phase, 'connected');
    assert.ok(w.enteredAt('connected')! - back <= 3_000);
    assert.deepEqual(w.clock.waiting, [3_000], 'watched again (no stream yet: probes)');
  });

  it('a first connection that fails (window reloaded with the service down) is retried by itself, with no Refresh', async () => {
    const w = world({ service: 'down' });
    await w.machine.connect();
    assert.equal(w.machine.state.phase, 'offline');
    assert.equal(w.machine.state.phase === 'offline' && w.machine.state.user, null);
    await w.clock.advance(30_000);
    assert.equal(w.machine.state.phase, 'offline');
    w.up = true;
    await w.clock.advance(3_000);
    assert.equal(w.machine.state.phase, 'connected');
  });

  it('a failed start of the bundled service is retried too (offline, serviceFailed), and so is a bundled service that stopped', async () => {
    const failedStart: AttemptOutcome = {
      kind: 'offline',
      problem: 'serviceFailed',
      serviceUrl: null,
      bundled: true,
      message: 'The bundled service could not start: Node.js was not found',
    };
    const w = world({ service: 'down', outcomeWhenDown: failedStart });
    await w.machine.connect();
    assert.equal(w.machine.state.phase === 'offline' && w.machine.state.problem, 'serviceFailed');
    w.up = true;
    await w.clock.advance(3_000);
    assert.equal(w.machine.state.phase, 'connected');
    w.up = false;
    w.machine.serviceStopped('The bundled service stopped (exit code 1); starting it again.');
    const stopped = w.machine.state as ConnectionState;
    assert.equal(stopped.phase === 'offline' && stopped.problem, 'serviceFailed');
    assert.equal(stopped.phase === 'offline' && stopped.user?.id, 7);
    w.up = true;
    await w.clock.advance(3_000);
    assert.equal(w.machine.state.phase, 'connected');
  });

  it('a refused token is failed, not retried; Retry (connect) tries again at once', async () => {
    const tokenRefused: AttemptOutcome = {
      kind: 'failed',
      problem: 'tokenRefused',
      serviceUrl: URL,
      bundled: false,
      message: 'The service refused the stored token.',
    };
    const w = world({ service: 'down', outcomeWhenDown: tokenRefused });
    await w.machine.connect();
    assert.equal(w.machine.state.phase, 'failed');
    await w.clock.advance(60_000);
    assert.equal(w.attempts, 1);
    w.up = true;
    await w.machine.connect();
    assert.equal(w.machine.state.phase, 'connected');
  });

  it('Retry while offline drops the waiting retry, tries at once and keeps saying offline while it tries', async () => {
    const w = world();
    await w.machine.connect();
    w.up = false;
    w.machine.streamChanged(true);
    w.machine.streamChanged(false);
    await settle();
    const shown = w.states.length;
    await w.machine.connect();
    assert.equal(w.states.length, shown, 'no "connecting" while offline');
    assert.deepEqual(w.clock.waiting, [2_000], 'one retry waiting (from the start of the backoff)');
    w.up = true;
    await w.machine.connect();
    assert.equal(w.machine.state.phase, 'connected');
    assert.deepEqual(w.clock.waiting, [3_000]);
  });

  it('signed out: nothing is retried or watched', async () => {
    const w = world({ service: 'down' });
    await w.machine.connect();
    w.machine.signedOut(URL, false);
    await w.clock.advance(60_000);
    assert.equal(w.attempts, 1);
    assert.deepEqual(w.clock.waiting, []);
    assert.equal(w.machine.state.phase, 'signedOut');
  });

  it('a call that fails as if the service were gone makes it probe at once; a refusal about the call itself does not', async () => {
    const w = world();
    await w.machine.connect();
    w.machine.streamChanged(true);
    w.machine.callFailed({ kind: 'conflict' });
    w.machine.callFailed({ kind: 'forbidden' });
    await settle();
    assert.equal(w.probes, 0);
    w.machine.callFailed({ kind: 'unreachable' });
    await settle();
    assert.equal(w.probes, 1);
    assert.equal(w.machine.state.phase, 'connected', 'the service answered the probe');
  });

  it('an attempt overtaken by a newer one (settings changed meanwhile) does not decide the state', async () => {
    const clock = new FakeClock();
    const answers: Array<(o: AttemptOutcome) => void> = [];
    const machine = new ConnectionMachine({
      timers: clock,
      attempt: () => new Promise<AttemptOutcome>((resolve) => answers.push(resolve)),
      probe: async () => ({ ok: true }),
      onState: () => undefined,
    });
    const first = machine.connect();
    const second = machine.connect();
    answers[1]!(connected);
    await second;
    answers[0]!(refused);
    await first;
    assert.equal(machine.state.phase, 'connected');
    assert.deepEqual(clock.waiting, [3_000], 'no retry scheduled by the overtaken attempt');
  });

  it('reads a failed call as offline (heals by itself), failed (needs the user) or neither', () => {
    assert.equal(problemOfError({ kind: 'unreachable' }), 'unreachable');
    assert.equal(problemOfError({ kind: 'server' }), 'serverError');
    assert.equal(problemOfError({ kind: 'badResponse' }), 'serverError');
    assert.equal(problemOfError({ kind: 'badCredentials' }), 'tokenRefused');
    assert.equal(problemOfError({ kind: 'conflict' }), null);
    assert.equal(problemOfError({ kind: 'notFound' }), null);
  });
});
