import assert from 'node:assert/strict';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { runInNewContext } from 'node:vm';
import { fullCollection, IdleMemory } from '../../../server/idle-memory';

describe('memory given back when the service goes idle', () => {
  function counted(): { idle: IdleMemory; reclaims: () => number } {
    let reclaims = 0;
    const idle = new IdleMemory(() => reclaims++, 60_000);
    return { idle, reclaims: () => reclaims };
  }

  it('does nothing while no request has been served', () => {
    const { idle, reclaims } = counted();
    assert.equal(idle.look(), false);
    assert.equal(idle.look(), false);
    assert.equal(reclaims(), 0);
  });

  it('does nothing while requests keep beginning between looks', () => {
    const { idle, reclaims } = counted();
    for (let i = 0; i < 5; i++) {
      idle.noteRequest();
      assert.equal(idle.look(), false);
    }
    assert.equal(reclaims(), 0);
  });

  it('reclaims once, at the first look with no request begun since the one before, then waits for requests again', () => {
    const { idle, reclaims } = counted();
    idle.noteRequest();
    idle.noteRequest();
    assert.equal(idle.look(), false, 'requests began since the last look');
    assert.equal(idle.look(), true);
    assert.equal(reclaims(), 1);
    assert.equal(idle.look(), false, 'nothing served since');
    assert.equal(idle.look(), false);
    assert.equal(reclaims(), 1);

    idle.noteRequest();
    assert.equal(idle.look(), false);
    assert.equal(idle.look(), true, 'idle again after serving');
    assert.equal(reclaims(), 2);
  });

  it('looks on its own timer, which never keeps the process alive, until stopped', () => {
    const { idle } = counted();
    idle.start();
    idle.start();
    idle.stop();
    idle.stop();
  });

  it('collects garbage with a full collection, without giving `gc` to the global object or later contexts', async () => {
    const hadGlobalGc = typeof (globalThis as { gc?: unknown }).gc;
    const collect = fullCollection();
    assert.ok(collect, 'the engine offers a full collection');
    assert.equal(typeof (globalThis as { gc?: unknown }).gc, hadGlobalGc);
    assert.equal(runInNewContext('typeof gc'), 'undefined');

    const ref = new WeakRef({ payload: new Array(1000).fill('x') });
    // A WeakRef keeps its target until the current job ends.
    await nextTurn();
    collect();
    assert.equal(ref.deref(), undefined);
  });
});
