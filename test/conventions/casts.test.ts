// Types flow from the schemas and the table declarations: a value is never cast to `never` to
// get it past the compiler (routes are generic, queries typed through `withTables`). This test
// reads every source and test module and finds `as never` outside comments.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const ROOT = resolve(__dirname, '../..');
const FOLDERS = ['server', 'extension', 'webview', 'contract', 'test', 'bench'];

const CAST = /\bas\s+never\b/g;

function castsIn(source: string): number {
  const code = source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
  return code.match(CAST)?.length ?? 0;
}

function modules(): string[] {
  return FOLDERS.flatMap((folder) =>
    (readdirSync(join(ROOT, folder), { recursive: true }) as string[])
      .map((p) => `${folder}/${p.split('\\').join('/')}`)
      .filter((p) => /\.(ts|tsx)$/.test(p) && !p.includes('node_modules/')),
  );
}

describe('architecture: no casts to never', () => {
  it('finds a cast in code and none in a comment (the check can fail)', () => {
    const cast = ['as', 'never'].join(' '); // not written out, or this file would hold one
    assert.equal(castsIn(`db.selectFrom('t' ${cast}).where('id' ${cast}, '=', 1)`), 2);
    assert.equal(castsIn(`// fails ${cast} reported\n/* ${cast} */ const x = 1;`), 0);
  });

  it('finds none in the service, the extension, the webview, the contract, the tests or the bench', () => {
    const files = modules();
    assert.ok(files.length > 300, `read only ${files.length} modules`);
    const offending = files
      .map((p) => [p, castsIn(readFileSync(join(ROOT, p), 'utf8'))] as const)
      .filter(([, n]) => n > 0);
    assert.deepEqual(
      offending.map(([p, n]) => `${p}: ${n}`),
      [],
      'type the value instead (withTables<…>, the route definition, the node type)',
    );
  });
});
