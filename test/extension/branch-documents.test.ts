// A branch's objects as writable documents: their paths, their file names (the name when it is
// unique and usable, else the id beside it), their YAML and back, the problems of a refused save
// on their lines, new objects' templates, the version clock and the save verdict.
import assert from 'node:assert/strict';
import {
  bareName,
  branchFolder,
  decodeSegment,
  encodeSegment,
  missingRequired,
  newObjectDocument,
  newObjectTemplate,
  objectDocument,
  objectFileName,
  objectText,
  pageFileNames,
  parseBranchAddress,
  parseObjectFileName,
  parseObjectText,
  problemsOfRefusal,
  afterStale,
  savePlan,
  saveVerdict,
  typeFolder,
  VersionClock,
} from '../../extension/core/branch-documents';
import { parseDocumentAddress } from '../../extension/core/change-documents';

describe('extension: branch objects as documents', () => {
  it('names folders and objects under /branches/<branch>/<type>/ and reads every address back; a branch name keeps its slashes in one segment', () => {
    assert.deepEqual(branchFolder('move-sw1'), { path: '/branches/move-sw1', query: '' });
    assert.deepEqual(typeFolder('move-sw1', 'dcim.device'), { path: '/branches/move-sw1/dcim.device', query: '' });
    assert.deepEqual(objectDocument('move-sw1', 'dcim.device', 'sw1.yaml'), {
      path: '/branches/move-sw1/dcim.device/sw1.yaml',
      query: '',
    });
    assert.deepEqual(parseBranchAddress(objectDocument('move-sw1', 'dcim.device', 'sw1.yaml')), {
      kind: 'object',
      branch: 'move-sw1',
      objectType: 'dcim.device',
      file: { id: null, name: 'sw1' },
      version: 'branch',
    });
    assert.deepEqual(parseBranchAddress(objectDocument('b', 'dcim.device', 'sw1 (12).yaml', 'main')), {
      kind: 'object',
      branch: 'b',
      objectType: 'dcim.device',
      file: { id: 12, label: 'sw1' },
      version: 'main',
    });
    assert.deepEqual(parseBranchAddress({ path: '/branches/feature%2Fq3%25', query: '' }), {
      kind: 'branch',
      branch: 'feature/q3%',
    });
    assert.equal(decodeSegment(encodeSegment('a/b%2F')), 'a/b%2F');
    assert.deepEqual(parseBranchAddress({ path: '/branches/b/dcim.device/', query: '' }), {
      kind: 'type',
      branch: 'b',
      objectType: 'dcim.device',
    });
    assert.deepEqual(parseBranchAddress({ path: '/branches', query: '' }), { kind: 'root' });
    const fresh = newObjectDocument('b', 'dcim.device', 'Device', 'k1');
    assert.deepEqual(fresh, { path: '/branches/b/dcim.device/New Device.yaml', query: 'new=k1' });
    assert.deepEqual(parseBranchAddress(fresh), { kind: 'new', branch: 'b', objectType: 'dcim.device', key: 'k1' });
  });

  it('refuses addresses that are not branch documents, and leaves them to the review documents (which ignore branch paths)', () => {
    for (const address of [
      { path: '/7/dcim.device/5/sw1.yaml', query: 'side=modified' },
      { path: '/branches/b/Device/sw1.yaml', query: '' },
      { path: '/branches/b/dcim.device/sw1.txt', query: '' },
      { path: '/branches/b/dcim.device/x/sw1.yaml', query: '' },
      { path: '/branches/b/dcim.device/sw1.yaml', query: 'version=other' },
      { path: '/branches/b//sw1.yaml', query: '' },
      { path: '/branches/b', query: 'new=1' },
    ])
      assert.equal(parseBranchAddress(address), null, JSON.stringify(address));
    assert.equal(parseDocumentAddress({ path: '/branches/b/dcim.device/sw1.yaml', query: '' }), null);
  });

  it('names an object file by its name when usable and unique, else with its id beside it, or by its id alone', () => {
    assert.equal(objectFileName({ id: 12, name: 'sw1' }), 'sw1.yaml');
    assert.equal(objectFileName({ id: 12, name: 'sw1' }, true), 'sw1 (12).yaml');
    assert.equal(objectFileName({ id: 12, name: 'eth0/1' }), 'eth0_1 (12).yaml');
    assert.equal(objectFileName({ id: 12, name: '42' }), '42 (12).yaml', 'a name that reads as an id');
    assert.equal(objectFileName({ id: 12, name: 'a (3)' }), 'a (3) (12).yaml', 'a name that reads as name and id');
    assert.equal(objectFileName({ id: 12 }), '12.yaml');
    assert.equal(objectFileName({ id: 12, name: '' }), '12.yaml');
    assert.equal(objectFileName({ id: 12, name: { first: 1 } }), '12.yaml');
    assert.equal(bareName({ id: 1, name: '.hidden' }), null);
    for (const name of ['sw1.yaml', 'sw1 (12).yaml', '12.yaml', 'eth0_1 (12).yaml', '42 (12).yaml'])
      assert.ok(parseObjectFileName(name), name);
    assert.deepEqual(parseObjectFileName('12.yaml'), { id: 12, label: null });
    assert.deepEqual(parseObjectFileName('a (3) (12).yaml'), { id: 12, label: 'a (3)' });
    assert.deepEqual(parseObjectFileName('sw1.yaml'), { id: null, name: 'sw1' });
    assert.equal(parseObjectFileName('.yaml'), null);
  });

  it('gives a page of objects in name order unique file names: a name shared in the page or with its neighbours takes the id', () => {
    const page = [
      { id: 3, name: 'eth0' },
      { id: 4, name: 'eth0' },
      { id: 5, name: 'eth1' },
      { id: 6, name: 'eth2' },
    ];
    assert.deepEqual(pageFileNames(page), ['eth0 (3).yaml', 'eth0 (4).yaml', 'eth1.yaml', 'eth2.yaml']);
    assert.deepEqual(pageFileNames(page, { after: { id: 9, name: 'eth2' } }), [
      'eth0 (3).yaml',
      'eth0 (4).yaml',
      'eth1.yaml',
      'eth2 (6).yaml',
    ]);
    const names = pageFileNames(page, { before: { id: 1, name: 'eth0' } });
    assert.equal(new Set(names).size, names.length);
  });

  it('shows an object as YAML of its attributes, keys sorted, without the fields the service computes', () => {
    const text = objectText({
      id: 5,
      url: 'http://x/api/dcim/devices/5/',
      display: 'sw1',
      name: 'sw1',
      rack: 'R2',
      status: 'planned',
      created: '2026-01-01T00:00:00Z',
      last_updated: '2026-01-02T00:00:00Z',
      config: { mtu: 9000 },
    });
    assert.equal(text, 'config:\n  mtu: 9000\nname: sw1\nrack: R2\nstatus: planned\n');
    assert.equal(objectText({ id: 5, url: 'u', display: 'Device 5', created: 'c', last_updated: 'l' }), '{}\n');
  });

  it('reads a document back as the attributes to write; computed fields are dropped with a warning on their line', () => {
    assert.deepEqual(parseObjectText('name: sw1\nrack: R3\ntags: [a, b]\nconfig:\n  mtu: 9000\n'), {
      ok: true,
      attrs: { name: 'sw1', rack: 'R3', tags: ['a', 'b'], config: { mtu: 9000 } },
      warnings: [],
    });
    assert.deepEqual(parseObjectText(''), { ok: true, attrs: {}, warnings: [] });
    assert.deepEqual(parseObjectText('# only a comment\n'), { ok: true, attrs: {}, warnings: [] });
    const withId = parseObjectText('name: sw1\nid: 7\n');
    assert.ok(withId.ok);
    assert.deepEqual(withId.attrs, { name: 'sw1' });
    assert.deepEqual(withId.warnings, [
      { line: 1, message: 'id is computed by the service: it is not saved.', severity: 'warning' },
    ]);
  });

  it('says what is wrong with a document, on its line: YAML errors, duplicate keys, a top level that is no mapping, bad attribute names', () => {
    const bad = (text: string) => {
      const parsed = parseObjectText(text);
      assert.equal(parsed.ok, false, text);
      return (parsed as { problems: Array<{ line: number; message: string }> }).problems;
    };
    const unclosed = bad('name: sw1\nrack: [R3\n')[0]!;
    assert.equal(unclosed.line >= 1, true);
    assert.doesNotMatch(unclosed.message, /at line/, 'the line is the diagnostic’s own');
    assert.equal(bad('name: sw1\nname: sw2\n')[0]!.line, 1);
    assert.match(bad('- a\n- b\n')[0]!.message, /mapping of attribute names/);
    assert.deepEqual(
      bad('name: sw1\n9lives: 1\n').map((p) => p.line),
      [1],
    );
    assert.match(bad('name: sw1\n"bad key": 1\n')[0]!.message, /letters, digits and underscores/);
  });

  it("puts a refused save's field errors on the lines of the attributes they name, and anything else on the first line", () => {
    const text = 'name: sw1\nrack: R3\nstatus: planned\n';
    assert.deepEqual(problemsOfRefusal(text, { message: 'rack: no such rack', fields: { rack: ['No such rack.'] } }), [
      { line: 1, message: 'No such rack.', severity: 'error' },
    ]);
    assert.deepEqual(problemsOfRefusal(text, { message: 'Branch "b" is merged.', fields: {} }), [
      { line: 0, message: 'Branch "b" is merged.', severity: 'error' },
    ]);
    assert.deepEqual(
      problemsOfRefusal(text, { message: 'x', fields: { 'X-NetBox-Branch': ['Unknown branch "b".'] } }),
      [{ line: 0, message: 'X-NetBox-Branch: Unknown branch "b".', severity: 'error' }],
    );
  });

  it("starts a new object from its type's required fields, and refuses to create it while one is empty (on that field's line)", () => {
    const template = newObjectTemplate('dcim.device', 'Device', 'move-sw1');
    assert.equal(
      template,
      '# A new Device in branch move-sw1: fill in the fields, then save to create it there.\n' +
        'device_type: null\nname: null\nrole: null\nsite: null\nstatus: active\n',
    );
    const parsed = parseObjectText(template);
    assert.ok(parsed.ok);
    assert.deepEqual(
      missingRequired('dcim.device', template, parsed.attrs).map((p) => [p.line, p.message]),
      [
        [1, 'device_type is required to create the object.'],
        [2, 'name is required to create the object.'],
        [3, 'role is required to create the object.'],
        [4, 'site is required to create the object.'],
      ],
    );
    const filled = 'name: sw3\ndevice_type: 1\nrole: leaf\nsite: 2\nstatus: planned\n';
    const ok = parseObjectText(filled);
    assert.ok(ok.ok);
    assert.deepEqual(missingRequired('dcim.device', filled, ok.attrs), []);
    assert.deepEqual(
      missingRequired('example.thing', 'name: ""\n', { name: '' }).map((p) => p.message),
      ['name is required to create the object.'],
    );
  });

  it('moves a document’s modification time forward exactly when its text changes (at least by one, never back)', () => {
    const clock = new VersionClock();
    const a = clock.observe('k', 'rack: R1\n', 1000);
    assert.equal(a.mtime, 1000);
    assert.equal(clock.observe('k', 'rack: R1\n', 5000).mtime, 1000, 'same text: same time');
    assert.equal(clock.observe('k', 'rack: R2\n', 900).mtime, 1001, 'a clock behind still moves forward');
    assert.equal(clock.observe('k', 'rack: R1\n', 7000).mtime, 7000);
  });

  it('a save names the version its document was read from (If-Match); unknown, the user chooses; without an ETag the texts are compared', () => {
    assert.deepEqual(savePlan({ text: 'rack: R1\n', etag: '"c7-2"' }), { kind: 'write', ifMatch: '"c7-2"' });
    assert.deepEqual(savePlan(undefined), { kind: 'choose' });
    assert.deepEqual(savePlan({ text: 'rack: R1\n', etag: null }), { kind: 'compare', base: 'rack: R1\n' });
    assert.equal(saveVerdict('rack: R1\n', 'rack: R1\n'), 'write');
    assert.equal(saveVerdict('rack: R1\n', 'rack: R3\n'), 'conflict');
  });

  it('a save refused as stale offers the choice, unless the branch holds the same text: then it writes over the version now, once', () => {
    const base = { text: 'rack: R1\n', etag: '"c7-2"' };
    assert.deepEqual(afterStale(base, { text: 'rack: R3\n', etag: '"c7-3"' }, false), { kind: 'choose' });
    assert.deepEqual(afterStale(base, { text: 'rack: R1\n', etag: '"c7-4"' }, false), {
      kind: 'retry',
      ifMatch: '"c7-4"',
    });
    assert.deepEqual(afterStale(base, { text: 'rack: R1\n', etag: '"c7-5"' }, true), { kind: 'choose' }, 'once');
    assert.deepEqual(afterStale(undefined, { text: 'rack: R1\n', etag: '"c7-4"' }, false), { kind: 'choose' });
    assert.deepEqual(afterStale(base, { text: 'rack: R1\n', etag: null }, false), { kind: 'choose' });
  });
});
