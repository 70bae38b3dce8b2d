// The service is always started with the same Node options (contract/service-node-options.ts):
// `npm start`, the deploy examples and the README's command lines say them in words, so each
// place that starts dist/server.js is held to the list here.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { SERVICE_NODE_OPTIONS } from '../../contract/service-node-options';

const ROOT = resolve(__dirname, '../..');
const options = SERVICE_NODE_OPTIONS.join(' ');

/** Every `node … dist/server.js` that runs the service in a text (not its backup and restore commands), with what stands between the two. */
function serviceStarts(text: string): string[] {
  return [...text.matchAll(/\bnode((?: +-[^\s]+)*) +dist\/server\.js(?! +(?:backup|restore)\b)/g)].map((m) => m[1]!.trim());
}

describe("conventions: the service's Node options", () => {
  it('npm start runs the service with them', () => {
    const scripts = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
    assert.deepEqual(serviceStarts(scripts.start!), [options]);
  });

  it('the deploy examples and the README start it with them', () => {
    const files = [...readdirSync(join(ROOT, 'deploy')).map((f) => join('deploy', f)), 'README.md'];
    let seen = 0;
    for (const file of files) {
      const text = readFileSync(join(ROOT, file), 'utf8');
      for (const given of serviceStarts(text)) {
        seen++;
        assert.equal(given, options, `${file}: node ${given} dist/server.js`);
      }
    }
    assert.ok(seen >= 3, `only ${seen} command lines found`);
  });
});
