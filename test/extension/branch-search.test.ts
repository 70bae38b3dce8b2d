// Quick open and Search over a branch's object documents, as data: what a query asks the
// service (part of a name, a page per type), the document paths of what it answers (the paths the
// branch's folders list), the lines a pattern matches with their ranges, and the bounds.
import assert from 'node:assert/strict';
import type { BranchObjectTypeAccess } from '../../contract/api/branching';
import { objectText, parseBranchAddress } from '../../extension/core/branch-documents';
import {
  fileQuery,
  findDocuments,
  literalOf,
  queryRegExp,
  registerIfLent,
  searchScopeOf,
  searchText,
  TEXT_SEARCH_SCAN_PER_TYPE,
  textMatches,
  type DocumentMatches,
  type ListObjects,
} from '../../extension/core/branch-search';
import { BranchObjectsClient, type ApiObject } from '../../extension/core/branch-objects-client';
import { extensionClient, seededServicePerTest } from './seed';

const type = (object_type: string, display: string, view = true): BranchObjectTypeAccess => ({
  object_type,
  display,
  url: `http://127.0.0.1:8000/api/${object_type.replace('.', '/')}s/`,
  view,
  add: true,
  change: true,
  delete: true,
});
const DEVICE = type('dcim.device', 'Device');
const SITE = type('dcim.site', 'Site');
const HIDDEN = type('ipam.prefix', 'Prefix', false);

type Obj = { id: number; name?: unknown; display: string; [k: string]: unknown };
const obj = (id: number, name: string | null, more: Record<string, unknown> = {}): Obj => ({
  id,
  ...(name === null ? {} : { name }),
  display: name ?? `#${id}`,
  url: `http://x/${id}/`,
  ...more,
});

/** A fake service: objects per type, `q` a case-insensitive part of the name, in name order; the calls it got. */
function service(objects: Record<string, Obj[]>) {
  const calls: Array<{ type: string; q?: string; limit: number }> = [];
  const list: ListObjects<Obj> = async (t, query) => {
    calls.push({ type: t.object_type, ...query });
    const all = (objects[t.object_type] ?? [])
      .filter(
        (o) =>
          query.q === undefined ||
          String(o.name ?? '')
            .toLowerCase()
            .includes(query.q.toLowerCase()),
      )
      .sort((a, b) => String(a.name ?? '').localeCompare(String(b.name ?? '')) || a.id - b.id);
    return { count: all.length, results: all.slice(0, query.limit) };
  };
  return { calls, list };
}

const scope = { branch: 'add-sw9', objectType: null };

describe('extension: quick open and Search over branch documents', () => {
  it('uses a proposed API only where the editor lends it: missing or refused, it says why and registers nothing', () => {
    const disposable = { dispose() {} };
    assert.deepEqual(
      registerIfLent(() => disposable),
      { lent: disposable },
    );
    assert.deepEqual(
      registerIfLent(() => undefined),
      { refused: 'the editor has no such API' },
    );
    assert.deepEqual(
      registerIfLent(() => {
        throw new Error(
          "Extension 'change-control.change-control' CANNOT use API proposal: fileSearchProvider2.\nIts package.json…",
        );
      }),
      { refused: "Extension 'change-control.change-control' CANNOT use API proposal: fileSearchProvider2." },
    );
  });

  it("searches a branch's folder or one type's folder, and nothing else of the scheme", () => {
    assert.deepEqual(searchScopeOf({ path: '/branches/add-sw9', query: '' }), scope);
    assert.deepEqual(searchScopeOf({ path: '/branches/a%2Fb/dcim.device', query: '' }), {
      branch: 'a/b',
      objectType: 'dcim.device',
    });
    assert.equal(searchScopeOf({ path: '/branches', query: '' }), null);
    assert.equal(searchScopeOf({ path: '/branches/b/dcim.device/sw1.yaml', query: '' }), null);
    assert.equal(searchScopeOf({ path: '/change-requests/1', query: '' }), null);
  });

  it('asks the service for the name a quick open pattern types: its last segment without .yaml, and the type its folder part names', () => {
    assert.deepEqual(fileQuery('sw1'), { name: 'sw1', typePart: null });
    assert.deepEqual(fileQuery('  sw1.yaml '), { name: 'sw1', typePart: null });
    assert.deepEqual(fileQuery('sw1.ya'), { name: 'sw1', typePart: null });
    assert.deepEqual(fileQuery('core.dc1'), { name: 'core.dc1', typePart: null });
    assert.deepEqual(fileQuery('dcim.device/sw'), { name: 'sw', typePart: 'dcim.device' });
    assert.deepEqual(fileQuery('branches\\b\\Device\\sw'), { name: 'sw', typePart: 'device' });
    assert.equal(fileQuery(''), null);
    assert.equal(fileQuery('dcim.device/'), null);
  });

  it('lists the objects whose names hold the text, a bounded page per visible type, with the paths the folders list (a shared name takes its id)', async () => {
    const svc = service({
      'dcim.device': [obj(1, 'sw1'), obj(2, 'sw2'), obj(3, 'sw2'), obj(4, 'router1'), obj(5, 'SW3')],
      'dcim.site': [obj(7, 'swamp')],
      'ipam.prefix': [obj(9, 'sw-net')],
    });
    const { found, limitHit } = await findDocuments(scope, [DEVICE, SITE, HIDDEN], 'sw', 100, svc.list);
    assert.deepEqual(
      found.map((f) => f.address.path),
      [
        '/branches/add-sw9/dcim.device/sw1.yaml',
        '/branches/add-sw9/dcim.device/sw2 (2).yaml',
        '/branches/add-sw9/dcim.device/sw2 (3).yaml',
        '/branches/add-sw9/dcim.device/SW3.yaml',
        '/branches/add-sw9/dcim.site/swamp.yaml',
      ],
    );
    assert.equal(limitHit, false);
    // Each path is one the file system reads as the object (by name, or by the id beside it).
    const ref = parseBranchAddress(found[1]!.address);
    assert.deepEqual(ref?.kind === 'object' && ref.file, { id: 2, label: 'sw2' });
    assert.deepEqual(
      svc.calls.map((c) => [c.type, c.q, c.limit]),
      [
        ['dcim.device', 'sw', 51],
        ['dcim.site', 'sw', 51],
      ],
    );
  });

  it("gives the last object of a full page its id when the next object shares its name (as the folder's listing does)", async () => {
    const devices = Array.from({ length: 3 }, (_, i) => obj(i + 1, i < 2 ? `a${i}` : 'dup'));
    devices.push(obj(10, 'dup'));
    const { found, limitHit } = await findDocuments(scope, [DEVICE], '', 3, service({}).list);
    assert.deepEqual(found, []);
    assert.equal(limitHit, false);
    const svc = service({ 'dcim.device': devices });
    const res = await findDocuments(scope, [DEVICE], 'a', 3, svc.list);
    assert.deepEqual(
      res.found.map((f) => f.address.path.split('/').pop()),
      ['a0.yaml', 'a1.yaml'],
    );
    const all = await findDocuments({ ...scope }, [DEVICE], 'd', 1, svc.list);
    assert.deepEqual(
      all.found.map((f) => f.address.path.split('/').pop()),
      ['dup (3).yaml'],
    );
    assert.equal(all.limitHit, true, 'one of two is listed');
  });

  it('answers at most maxResults documents and stops asking once cancelled', async () => {
    const svc = service({ 'dcim.device': [obj(1, 'x1'), obj(2, 'x2')], 'dcim.site': [obj(3, 'x3')] });
    const res = await findDocuments(scope, [DEVICE, SITE], 'x', 2, svc.list);
    assert.equal(res.found.length, 2);
    assert.equal(res.limitHit, true);
    const cancelled = service({ 'dcim.device': [obj(1, 'x1')] });
    const none = await findDocuments(scope, [DEVICE, SITE], 'x', 10, cancelled.list, () => true);
    assert.deepEqual(none.found, []);
    assert.deepEqual(cancelled.calls, []);
  });

  it("a type's folder searches that type only; a folder part of the pattern picks the types it names", async () => {
    const svc = service({ 'dcim.device': [obj(1, 'dc1-sw')], 'dcim.site': [obj(2, 'dc1')] });
    const inType = await findDocuments({ branch: 'b', objectType: 'dcim.site' }, [DEVICE, SITE], 'dc1', 10, svc.list);
    assert.deepEqual(
      inType.found.map((f) => f.address.path),
      ['/branches/b/dcim.site/dc1.yaml'],
    );
    const named = await findDocuments(scope, [DEVICE, SITE], 'device/dc1', 10, svc.list);
    assert.deepEqual(
      named.found.map((f) => f.object.id),
      [1],
    );
  });

  it('matches a pattern as the options say: plain text (case-insensitive by default), case-sensitive, whole word, regular expression', () => {
    const text = 'name: sw1\nrack: R7\nserial: FOC1234X\ntags:\n- Rack-A\n';
    const at = (q: Parameters<typeof queryRegExp>[0]) => {
      const re = queryRegExp(q);
      assert.ok(re instanceof RegExp);
      return textMatches(text, re, 100).map((m) => `${m.start.line}:${m.start.character}-${m.end.character}`);
    };
    assert.deepEqual(at({ pattern: 'rack' }), ['1:0-4', '4:2-6']);
    assert.deepEqual(at({ pattern: 'rack', isCaseSensitive: true }), ['1:0-4']);
    assert.deepEqual(at({ pattern: 'Rack', isCaseSensitive: true, isWordMatch: true }), ['4:2-6']);
    assert.deepEqual(at({ pattern: 'FOC', isWordMatch: true }), []);
    assert.deepEqual(at({ pattern: 'R\\d', isRegExp: true, isCaseSensitive: true }), ['1:6-8']);
    assert.deepEqual(at({ pattern: 'a.e' }), [], 'a dot is a dot unless the pattern is an expression');
    assert.deepEqual(at({ pattern: '^$', isRegExp: true }), [], 'an empty match is no match');
    assert.deepEqual(at({ pattern: 'Rack\\-A', isRegExp: true }), ['4:2-8'], 'an escape a Unicode expression refuses');
    assert.ok('error' in (queryRegExp({ pattern: '(', isRegExp: true }) as object));
  });

  it('reports each match with its line as the preview, ranges in the document and in the preview, cut to charsPerLine', () => {
    const re = queryRegExp({ pattern: 'sw' }) as RegExp;
    const [m, n] = textMatches('name: sw1 sw2\n', re, 100, 8);
    assert.deepEqual(m, {
      start: { line: 0, character: 6 },
      end: { line: 0, character: 8 },
      preview: 'name: sw',
      previewStart: { line: 0, character: 6 },
      previewEnd: { line: 0, character: 8 },
    });
    assert.deepEqual([n!.start.character, n!.previewStart.character], [10, 8]);
    assert.equal(textMatches('a a a a\n', queryRegExp({ pattern: 'a' }) as RegExp, 2).length, 2);
    const multi = textMatches(
      'a: 1\nb: 2\n',
      queryRegExp({ pattern: '1\\nb', isRegExp: true, isMultiline: true }) as RegExp,
      9,
      100,
      true,
    );
    assert.deepEqual(
      multi.map((x) => [x.start, x.end, x.preview]),
      [[{ line: 0, character: 3 }, { line: 1, character: 1 }, 'a: 1\nb: 2']],
    );
  });

  it("asks the service for a pattern's text only when it is plain text", () => {
    assert.equal(literalOf({ pattern: ' FOC1234X ' }), 'FOC1234X');
    assert.equal(literalOf({ pattern: 'sw1', isRegExp: true }), 'sw1');
    assert.equal(literalOf({ pattern: 'sw\\d', isRegExp: true }), null);
    assert.equal(literalOf({ pattern: '   ' }), null);
  });

  it("finds text in the documents' own text: objects named like it and the first objects of each type, each once, in the folders' paths", async () => {
    const sw1 = obj(1, 'sw1', { rack: 'R7', serial: 'FOC1234X' });
    const svc = service({
      'dcim.device': [sw1, obj(2, 'FOC-lab', { rack: 'R1' }), obj(3, 'sw3', { rack: 'R9' })],
      'dcim.site': [obj(4, 'dc1', { description: 'foc hall' })],
      'ipam.prefix': [obj(5, 'p', { description: 'FOC' })],
    });
    const reported: Array<DocumentMatches<Obj>> = [];
    const { limitHit } = await searchText(
      scope,
      [DEVICE, SITE, HIDDEN],
      { pattern: 'FOC' },
      { maxResults: 100 },
      svc.list,
      (d) => reported.push(d),
    );
    assert.deepEqual(
      reported.map((d) => [d.address.path, d.matches.map((m) => m.preview)]),
      [
        ['/branches/add-sw9/dcim.device/FOC-lab.yaml', ['name: FOC-lab']],
        ['/branches/add-sw9/dcim.device/sw1.yaml', ['serial: FOC1234X']],
        ['/branches/add-sw9/dcim.site/dc1.yaml', ['description: foc hall']],
      ],
    );
    // The preview is the document's own line: the text the file system serves.
    const line = objectText(sw1).split('\n')[reported[1]!.matches[0]!.start.line];
    assert.equal(line, 'serial: FOC1234X');
    assert.equal(limitHit, false);
    assert.deepEqual(
      svc.calls.map((c) => [c.type, c.q, c.limit]),
      [
        ['dcim.device', 'FOC', 101],
        ['dcim.device', undefined, TEXT_SEARCH_SCAN_PER_TYPE + 1],
        ['dcim.site', 'FOC', 101],
        ['dcim.site', undefined, TEXT_SEARCH_SCAN_PER_TYPE + 1],
      ],
    );
  });

  it('says the limit was hit when objects of a type went unread, or when more matches than maxResults exist', async () => {
    const many = Array.from({ length: TEXT_SEARCH_SCAN_PER_TYPE + 2 }, (_, i) =>
      obj(i + 1, `d${String(i).padStart(4, '0')}`, { rack: i === TEXT_SEARCH_SCAN_PER_TYPE + 1 ? 'R42' : 'R1' }),
    );
    const unread = await searchText(
      scope,
      [DEVICE],
      { pattern: 'R42' },
      { maxResults: 100 },
      service({ 'dcim.device': many }).list,
      () => {},
    );
    assert.equal(unread.limitHit, true, 'the object holding R42 is beyond the objects read');

    const reported: number[] = [];
    const capped = await searchText(
      scope,
      [DEVICE],
      { pattern: 'R1' },
      { maxResults: 3 },
      service({ 'dcim.device': many.slice(0, 5) }).list,
      (d) => reported.push(d.matches.length),
    );
    assert.deepEqual(reported, [1, 1, 1]);
    assert.equal(capped.limitHit, true);

    const all = await searchText(
      scope,
      [DEVICE],
      { pattern: 'R1' },
      { maxResults: 9 },
      service({ 'dcim.device': many.slice(0, 5) }).list,
      () => {},
    );
    assert.equal(all.limitHit, false);
  });

  it('stops reading types once cancelled, and refuses a pattern that is not a valid expression', async () => {
    const svc = service({ 'dcim.device': [obj(1, 'x')] });
    await searchText(
      scope,
      [DEVICE, SITE],
      { pattern: 'x' },
      { maxResults: 10 },
      svc.list,
      () => {},
      () => true,
    );
    assert.deepEqual(svc.calls, []);
    await assert.rejects(
      searchText(scope, [DEVICE], { pattern: '[', isRegExp: true }, { maxResults: 10 }, svc.list, () => {}),
      /not a valid regular expression/,
    );
  });

  describe('against the service', () => {
    const seeded = seededServicePerTest();

    it("finds a branch's objects by part of their names and text inside their documents, as the documents show them", async () => {
      const { world } = seeded;
      const objects = new BranchObjectsClient(extensionClient(world, world.author));
      const ctx = (await objects.context(world.branch.name))!;
      const list: ListObjects<ApiObject> = (t, query) =>
        objects.listObjects(ctx, t, { q: query.q, ordering: 'name', limit: query.limit });
      const where = { branch: world.branch.name, objectType: null };

      const files = await findDocuments(where, ctx.access.object_types, 'SW', 50, list);
      assert.deepEqual(
        files.found.map((f) => f.address.path),
        [`/branches/${world.branch.name}/dcim.device/sw1.yaml`, `/branches/${world.branch.name}/dcim.device/sw2.yaml`],
      );

      const found: Array<DocumentMatches<ApiObject>> = [];
      await searchText(where, ctx.access.object_types, { pattern: 'rack: R2' }, { maxResults: 10 }, list, (d) =>
        found.push(d),
      );
      assert.deepEqual(
        found.map((d) => d.address.path.split('/').pop()),
        ['sw1.yaml', 'sw2.yaml'],
        "the branch's racks (main moved sw1 to R3)",
      );
      // The match's line is that line of the document the file system serves (the object read alone).
      const sw1 = (await objects.getObject(ctx, found[0]!.type, found[0]!.object.id)).value;
      const m = found[0]!.matches[0]!;
      assert.equal(objectText(sw1).split('\n')[m.start.line], m.preview);
      assert.equal(m.preview.slice(m.start.character, m.end.character), 'rack: R2');
    });
  });
});
