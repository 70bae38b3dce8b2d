// Activation of the built extension, in plain Node with a fake `vscode` (test/support/fake-vscode.ts):
// what it registers, that it does no synchronous file, process or network work, that it leaves
// the API's schemas (zod), the YAML serialiser and the panel host to load at first use, and the
// size of the minified bundle. (Its time is measured by `npm run bench`, not here.)
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CHANGE_REQUEST_PANEL, COMMANDS, COMMENT_CONTROLLER, VIEWS } from '../../extension/core/commands';
import { DOCUMENT_SCHEME } from '../../extension/core/change-documents';
import { REVIEW_SCHEME } from '../../extension/core/review-draft';
import { activateInFreshNode, buildExtensionBundle, type ProbeResult } from '../support/activation';

/** What VS Code loads: the minified bundle, within this budget (without its source map). */
const BUNDLE_BUDGET = 450 * 1024;

/** Modules activation must leave for later: the API's schemas and their parsers, YAML, the panel host. */
const LATER = [
  /^node_modules\/yaml\//,
  /^node_modules\/zod\/v4\/classic\//,
  /^contract\/api\/(common|branching|change-control|host)\.ts$/,
  /^extension\/core\/(api-client|sse|snapshot|webview-messages)\.ts$/,
  /^extension\/vscode\/change-request-panel\.ts$/,
];

describe('extension: activation of the built bundle (fake vscode, plain Node)', function () {
  this.timeout(60_000);
  let dir: string;
  let result: ProbeResult;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'cc-extension-bundle-'));
    const bundle = await buildExtensionBundle(dir, { minify: false });
    [result] = await activateInFreshNode(bundle, 1, { modules: true });
    assert.equal(result.error, undefined, result.error);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('registers every command of the table, the views, the comment controller, the document scheme and the panel serializer', () => {
    assert.deepEqual([...result.commands].sort(), COMMANDS.map((c) => c.id).sort());
    assert.deepEqual(
      [...result.treeViews].sort(),
      Object.values(VIEWS)
        .map((v) => v.id)
        .sort(),
    );
    assert.deepEqual(result.commentControllers, [COMMENT_CONTROLLER]);
    assert.deepEqual(result.fileSystemProviders, [DOCUMENT_SCHEME, REVIEW_SCHEME]);
    assert.deepEqual(result.webviewSerializers, [CHANGE_REQUEST_PANEL]);
  });

  it('does no synchronous file, process or network work in activate()', () => {
    assert.deepEqual(result.syncWork, []);
  });

  it('builds no schema and loads neither YAML nor the panel host while activating; they wait for first use', () => {
    const early = result.evaluated!.filter((m) => LATER.some((r) => r.test(m)));
    assert.deepEqual(early, [], 'evaluated during activation');
    // Each is in the bundle as a module evaluated at first use (not inlined into the start-up code).
    for (const pattern of LATER)
      assert.ok(
        result.deferred!.some((m) => pattern.test(m)),
        `no deferred module matches ${pattern}`,
      );
  });

  it(`keeps the minified bundle within ${BUNDLE_BUDGET / 1024} KB`, async () => {
    const bytes = statSync(await buildExtensionBundle(dir, { minify: true })).size;
    assert.ok(bytes <= BUNDLE_BUDGET, `${Math.round(bytes / 1024)} KB`);
  });
});
