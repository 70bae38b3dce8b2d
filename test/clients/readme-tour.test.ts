// The README's tour, run as a reader would: every `sh` block of "A tour with curl", in order,
// with bash, curl and jq against the service as `npm start` starts it. The tour must run start to
// end and show what it says it shows. Without curl or jq the test is skipped, except where
// REQUIRE_README_TOUR=1 (CI, which installs them) makes that a failure.
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { npmStart } from './npm-start';

const TOKEN = 'readmetour0123456789abcdef0123456789abcd';
const README = join(__dirname, '../../README.md');

function has(tool: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${tool}`], { stdio: 'ignore' }).status === 0;
}

/** The tour's shell blocks, in order, as one script for the service at `base`. */
function tourScript(readme: string, base: string): string {
  const start = readme.indexOf('## A tour with curl');
  const end = readme.indexOf('\n## ', start + 1);
  assert.ok(start >= 0 && end > start, 'the README has a section "A tour with curl"');
  const blocks = [...readme.slice(start, end).matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
  const lines = blocks.join('\n').split('\n');
  assert.ok(lines.includes('BASE=http://127.0.0.1:8000'), 'the tour sets BASE to npm start’s address');
  assert.ok(
    lines.some((l) => l.startsWith('TOKEN=...')),
    'the tour sets TOKEN to the admin token',
  );
  return (
    lines
      .map((l) => (l === 'BASE=http://127.0.0.1:8000' ? `BASE=${base}` : l))
      .map((l) => (l.startsWith('TOKEN=...') ? `TOKEN=${TOKEN}` : l))
      // Watching the stream live never ends; the tour's wait_for_merge below it does.
      .filter((l) => !l.startsWith('curl -N '))
      .join('\n')
  );
}

describe('README: the tour with curl', () => {
  it('runs start to end against npm start and shows what it says: the merge refused while ci/build is pending, then completed; the second request’s suggestion applied; a save naming a version gone refused (412); an idempotent retry answering the same comment', async function () {
    this.timeout(150_000);
    const missing = ['bash', 'curl', 'jq'].filter((t) => !has(t));
    if (missing.length) {
      assert.ok(process.env.REQUIRE_README_TOUR !== '1', `REQUIRE_README_TOUR=1 but ${missing.join(', ')} missing`);
      this.skip();
    }
    const service = npmStart(TOKEN);
    let run: ChildProcess | undefined;
    try {
      const script = tourScript(readFileSync(README, 'utf8'), await service.url);
      // A group of its own: a tour that hangs is stopped with its curl (the finally below).
      run = spawn('bash', ['-eu', '-c', script], { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
      let output = '';
      run.stdout!.on('data', (c: Buffer) => (output += c.toString()));
      run.stderr!.on('data', (c: Buffer) => (output += c.toString()));
      // A tour that never ends (a step waiting for what never came) is stopped, and fails with its output.
      const stopping = setTimeout(() => process.kill(-run!.pid!, 'SIGKILL'), 90_000);
      const code = await new Promise<number | null>((done) => run!.on('exit', done));
      clearTimeout(stopping);
      assert.equal(code, 0, output);
      const lines = output.split('\n').filter((l) => l.trim() !== '');
      // The refusals the tour shows on purpose, and no other.
      const refusals = lines.filter((l) => /^\{"(detail|colour)"/.test(l));
      assert.deepEqual(
        refusals.map((l) => JSON.parse(l)),
        [
          { detail: 'Required check "ci/build" is pending.' },
          { colour: ['is not a filter of this list.'] },
          {
            detail:
              'Policy "Device changes" governs 1 open change request (#1); delete with ?force=true to detach it and refresh them.',
            change_requests: [1],
            count: 1,
          },
        ],
        output,
      );
      assert.ok(lines.includes('"completed"'), `request 1 completed by the merge:\n${output}`);
      assert.ok(
        lines.some((l) =>
          /^\{"comments":\[\d+\],"objects":\[\{"object_type":"dcim.device","object_id":1\}\]\}$/.test(l),
        ),
        `the suggestion applied:\n${output}`,
      );
      assert.ok(lines.includes('{"serial":"FOC1"}'), `a save naming the version now:\n${output}`);
      assert.ok(
        lines.some((l) => /^"Device 1 has changed since the version If-Match names: /.test(l)),
        `a save naming a version gone refused:\n${output}`,
      );
      const [first, second] = lines.slice(-2);
      assert.match(first!, /^\d+$/, output);
      assert.equal(second, first, 'an idempotent retry answers the same comment');
    } finally {
      try {
        if (run?.exitCode === null) process.kill(-run.pid!, 'SIGKILL');
      } catch {
        /* already gone */
      }
      service.stop();
    }
  });
});
