// Words the extension shows: relative times with the exact time for hovers, approvals never as
// "2 of 1 approvals", why a check did not run after Re-run Checks, and capped search results.
import assert from 'node:assert/strict';
import { approvalsPhrase } from '../../contract/labels';
import { checkRunSummary, searchPlaceholder, whyNotRun } from '../../extension/core/messages';
import { exactTime, freezeRule, readableTimes, relativeTime } from '../../contract/time';
import { makeCheck } from './fixtures';

const NOW = new Date('2026-11-10T12:00:00.000Z');
const ago = (seconds: number) => new Date(NOW.getTime() - seconds * 1000).toISOString();

describe('extension: words', () => {
  it('says times relative to now', () => {
    assert.equal(relativeTime(ago(10), NOW), 'just now');
    assert.equal(relativeTime(ago(60), NOW), '1 minute ago');
    assert.equal(relativeTime(ago(3 * 60), NOW), '3 minutes ago');
    assert.equal(relativeTime(ago(2 * 3600), NOW), '2 hours ago');
    assert.equal(relativeTime(ago(26 * 3600), NOW), 'yesterday');
    assert.equal(relativeTime(ago(3 * 86400), NOW), '3 days ago');
    assert.equal(relativeTime(ago(14 * 86400), NOW), '2 weeks ago');
    assert.equal(relativeTime(ago(90 * 86400), NOW), '3 months ago');
    assert.equal(relativeTime(ago(800 * 86400), NOW), '2 years ago');
    assert.equal(relativeTime(ago(-5 * 60), NOW), 'in 5 minutes');
    assert.equal(relativeTime('not a time', NOW), 'not a time');
  });

  it("writes every time one way, in the reader's zone, without seconds", () => {
    assert.equal(exactTime('2026-11-01T09:30:05.000Z', 'UTC'), '1 Nov 2026, 09:30 UTC');
    assert.equal(exactTime('2026-11-28T22:33:06.952Z', 'Asia/Kolkata'), '29 Nov 2026, 04:03 GMT+5:30');
    assert.equal(exactTime('garbage'), 'garbage');
  });

  it("writes the service's ISO instants in a reason as the reader reads times (no ISO string left)", () => {
    assert.equal(
      readableTimes('Merging is frozen by "Year end" until 2026-11-28T22:33:06.952Z.', 'Asia/Kolkata'),
      'Merging is frozen by "Year end" until 29 Nov 2026, 04:03 GMT+5:30.',
    );
    assert.equal(
      readableTimes('The change window opens at 2026-11-01T12:00:00.000Z. Then 2026-11-02T00:00:00Z.', 'UTC'),
      'The change window opens at 1 Nov 2026, 12:00 UTC. Then 2 Nov 2026, 00:00 UTC.',
    );
    assert.equal(readableTimes('No time here (ci/build).'), 'No time here (ci/build).');
  });

  it('says a recurring freeze as its rule in its own zone', () => {
    const rule = (weekdays: number[], start: string, end: string, zone: string) =>
      freezeRule({ weekdays, start_time: start, end_time: end, time_zone: zone });
    assert.equal(rule([1], '08:00', '12:00', 'America/New_York'), 'every Monday 08:00–12:00 New York time');
    assert.equal(
      rule([1, 2, 3, 4, 5], '18:00', '20:00', 'Europe/Berlin'),
      'every Monday to Friday 18:00–20:00 Berlin time',
    );
    assert.equal(
      rule([6, 7], '00:00', '00:00', 'UTC'),
      'every Saturday and Sunday 00:00–00:00 (into the next day) UTC',
    );
    assert.equal(
      rule([1, 3, 5], '09:00', '10:00', 'America/Argentina/Buenos_Aires'),
      'every Monday, Wednesday and Friday 09:00–10:00 Buenos Aires time',
    );
    assert.equal(rule([1, 2, 3, 4, 5, 6, 7], '22:00', '06:00', 'UTC'), 'every day 22:00–06:00 (into the next day) UTC');
  });

  it('never says "2 of 1 approvals"', () => {
    assert.equal(approvalsPhrase(0, 1), '0 of 1 approval');
    assert.equal(approvalsPhrase(1, 1), '1 of 1 approval');
    assert.equal(approvalsPhrase(1, 2), '1 of 2 approvals');
    assert.equal(approvalsPhrase(2, 1), '2 approvals (1 needed)');
    assert.equal(approvalsPhrase(0, 0), 'no approval needed');
    assert.equal(approvalsPhrase(1, 0), '1 approval (none needed)');
    for (let a = 0; a < 5; a += 1)
      for (let n = 0; n < 5; n += 1) {
        const m = /^(\d+) of (\d+)/.exec(approvalsPhrase(a, n));
        if (m) assert.ok(Number(m[1]) <= Number(m[2]), approvalsPhrase(a, n));
      }
  });

  it('says after Re-run Checks which checks did not run, and why', () => {
    const checks = [
      makeCheck({ id: 1, name: 'has-changes', label: 'Branch has changes', status: 'success' }),
      makeCheck({ id: 2, name: 'ci/build', label: '', status: 'pending' }),
      makeCheck({
        id: 3,
        name: 'no-conflicts',
        label: 'No conflicts with main',
        status: 'skipped',
        summary: 'The branch is gone.',
      }),
      makeCheck({ id: 4, name: 'lint', label: 'Lint', status: 'error', summary: 'TypeError: x is undefined' }),
      makeCheck({ id: 5, name: 'deploy', label: 'Deploy', status: 'running' }),
    ];
    assert.equal(whyNotRun(checks[0]), null);
    assert.equal(
      checkRunSummary('Move sw1', checks),
      'Checks re-run on "Move sw1": 1 passed, 1 pending, 1 skipped, 1 error, 1 running. Did not run: ci/build: not run here, its result is reported from outside (a pipeline) and none came yet; ' +
        'No conflicts with main: skipped (The branch is gone.); Lint: the check itself broke (TypeError: x is undefined); Deploy: reported from outside, still running.',
    );
    assert.equal(checkRunSummary('X', [checks[0]]), 'Checks re-run on "X": 1 passed.');
    assert.equal(checkRunSummary('X', []), 'Checks re-run on "X": it has no checks.');
  });

  it('says when search results were capped', () => {
    assert.equal(searchPlaceholder('sw1', 1, false), '1 result for "sw1"');
    assert.equal(
      searchPlaceholder('sw', 50, true),
      '50 results for "sw": more matched than the service returns; refine the search to see them',
    );
  });
});
