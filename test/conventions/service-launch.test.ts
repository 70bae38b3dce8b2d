// The service is always started with the same Node options and environment
// (launch/service-launch.ts): `npm start`, the deploy examples, the README's and docs/operations.md's command
// lines say them in words, so each place that starts dist/server.js is held to the lists here.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { SERVICE_ENVIRONMENT, SERVICE_NODE_OPTIONS, serviceEnvironmentWords } from '../../launch/service-launch';

const ROOT = resolve(__dirname, '../..');
const options = SERVICE_NODE_OPTIONS.join(' ');

interface Start {
  /** The `NAME=value` words before `node` on its command line. */
  environment: string[];
  /** What stands between `node` and `dist/server.js`. */
  options: string;
}

/** Every `node … dist/server.js` that runs the service in a text (not its backup and restore commands). */
function serviceStarts(text: string): Start[] {
  return [
    ...text.matchAll(
      /((?:\b[A-Za-z_]\w*=\S+ +)*)(?:\S*\/)?\bnode((?: +-[^\s]+)*) +dist\/server\.js(?! +(?:backup|restore)\b)/g,
    ),
  ].map((m) => ({
    environment: m[1]!.trim().split(/ +/).filter(Boolean),
    options: m[2]!.trim(),
  }));
}

/** The variables a file sets for every start in it: systemd's `Environment=NAME=value`, Compose's `NAME: "value"` (or single quotes). */
function declaredEnvironment(text: string): string[] {
  return [...text.matchAll(/^Environment=(\w+=\S+)$/gm), ...text.matchAll(/^ +(\w+): ["']([^"']*)["']$/gm)].map((m) =>
    m[2] === undefined ? m[1]! : `${m[1]}=${m[2]}`,
  );
}

function missingEnvironment(start: Start, declared: string[]): string[] {
  return Object.entries(SERVICE_ENVIRONMENT)
    .map(([name, value]) => `${name}=${value}`)
    .filter((word) => !start.environment.includes(word) && !declared.includes(word));
}

describe("conventions: the service's Node options and environment", () => {
  it('npm start runs the service with them', () => {
    const scripts = (
      JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }
    ).scripts;
    assert.deepEqual(serviceStarts(scripts.start!), [{ environment: serviceEnvironmentWords().split(' '), options }]);
  });

  it('the deploy examples, the README and the operations guide start it with them', () => {
    const files = [
      ...readdirSync(join(ROOT, 'deploy')).map((f) => join('deploy', f)),
      'README.md',
      'docs/operations.md',
    ];
    let seen = 0;
    for (const file of files) {
      const text = readFileSync(join(ROOT, file), 'utf8');
      const declared = declaredEnvironment(text);
      for (const start of serviceStarts(text)) {
        seen++;
        assert.equal(start.options, options, `${file}: node ${start.options} dist/server.js`);
        assert.deepEqual(
          missingEnvironment(start, declared),
          [],
          `${file}: node ${start.options} dist/server.js without the service's environment`,
        );
      }
    }
    assert.ok(seen >= 4, `only ${seen} command lines found`);
  });

  it('a start without the environment is found', () => {
    const [start] = serviceStarts('node --max-semi-space-size=4 dist/server.js --port 8000');
    assert.deepEqual(missingEnvironment(start!, []), [serviceEnvironmentWords()]);
    const [given] = serviceStarts(
      `DATABASE_URL=postgres://x ${serviceEnvironmentWords()} node ${options} dist/server.js`,
    );
    assert.deepEqual(missingEnvironment(given!, []), []);
  });
});
