// Changed objects as documents: their paths, their YAML (sorted keys, so the diff editor
// highlights exactly what changed), and attributes mapped to lines and back.
import assert from 'node:assert/strict';
import {
  attributeAtLine,
  attributeSpans,
  CHANGE_DECORATION,
  changeDocument,
  changeKind,
  descriptionDocument,
  diffTitle,
  documentLabel,
  hasAttribute,
  lineOfAttribute,
  parseDocumentAddress,
  serializeState,
  threadSide,
} from '../../extension/core/change-documents';
import { makeChange } from './fixtures';

const DEVICE = {
  name: 'sw1',
  config: 'hostname sw1\ninterface eth0\n mtu 9000\n',
  custom_fields: { owner: 'netops', cost_center: null },
  interfaces: [{ name: 'eth0', mtu: 9000 }, { name: 'eth1' }],
  tags: [],
};

describe('extension: changed objects as documents', () => {
  it('names each side of a change as people read it (request, object type, object name: the path tabs, breadcrumbs and the Comments panel show), its id and side in the query, and reads it back', () => {
    const change = makeChange({ id: 11, object_type: 'dcim.device', object_id: 5, object_repr: 'sw1/core: "A"' });
    const modified = changeDocument(7, 'modified', change);
    assert.deepEqual(modified, {
      path: '/Change request #7/dcim.device/sw1_core_ _A_.yaml',
      query: 'id=5&side=modified',
    });
    const eth0 = makeChange({ id: 12, object_type: 'dcim.interface', object_id: 9, object_repr: 'sw1 · eth0' });
    assert.equal(changeDocument(7, 'modified', eth0).path, '/Change request #7/dcim.interface/sw1 · eth0.yaml');
    assert.equal(
      changeDocument(7, 'original', change).path,
      modified.path,
      'the diff editors show one object, not a rename',
    );
    assert.deepEqual(parseDocumentAddress(modified), {
      kind: 'change',
      changeRequestId: 7,
      side: 'modified',
      objectType: 'dcim.device',
      objectId: 5,
      label: 'sw1_core_ _A_',
    });
    assert.equal(parseDocumentAddress(changeDocument(7, 'current', change))?.kind, 'change');
    assert.deepEqual(descriptionDocument(7, 'Move sw1'), {
      path: '/Change request #7/Move sw1.md',
      query: 'doc=description',
    });
    assert.deepEqual(parseDocumentAddress(descriptionDocument(7, 'Move sw1')), {
      kind: 'description',
      changeRequestId: 7,
      label: 'Move sw1',
    });
  });

  it('refuses addresses that name nothing it serves', () => {
    const ok = '/Change request #7/dcim.device/a.yaml';
    const bad: [string, string][] = [
      ['', ''],
      ['/', ''],
      [ok, ''],
      [ok, 'id=5&side=elsewhere'],
      [ok, 'id=5&side=original&x=1'],
      [ok, 'id=0&side=original'],
      [ok, 'side=original'],
      ['/Change request #x/dcim.device/a.yaml', 'id=5&side=original'],
      ['/7/dcim.device/a.yaml', 'id=5&side=original'],
      ['/Change request #7/Device/a.yaml', 'id=5&side=original'],
      ['/Change request #7/dcim.device/a.txt', 'id=5&side=original'],
      ['/Change request #7/dcim.device', 'id=5&side=original'],
      ['/Change request #7/x.txt', 'doc=description'],
      ['/Change request #7/x.md', 'id=5&side=original'],
      ['/Change request #7/d/x.md', 'doc=description'],
      ['Change request #7/dcim.device/a.yaml', 'id=5&side=original'],
      ['/branches/3/dcim.device/a.yaml', 'id=5&side=original'],
    ];
    for (const [path, query] of bad) assert.equal(parseDocumentAddress({ path, query }), null, `${path}?${query}`);
  });

  it('keeps labels file-name safe and short, with a fallback for an empty one', () => {
    assert.equal(documentLabel('a/b\\c:d*e?f"g<h>i|j\nk', 'x'), 'a_b_c_d_e_f_g_h_i_j_k');
    assert.equal(documentLabel('   ', 'object-5'), 'object-5');
    assert.equal(documentLabel('..hidden', 'x'), 'hidden');
    assert.equal(documentLabel('x'.repeat(200), 'y').length, 80);
  });

  it('serialises a state as YAML with keys sorted at every level, whatever order they came in', () => {
    const text = serializeState(DEVICE);
    const shuffled = serializeState({
      tags: [],
      interfaces: [{ mtu: 9000, name: 'eth0' }, { name: 'eth1' }],
      custom_fields: { cost_center: null, owner: 'netops' },
      config: DEVICE.config,
      name: 'sw1',
    });
    assert.equal(text, shuffled);
    assert.deepEqual(
      text
        .split('\n')
        .filter((l) => /^\S/.test(l))
        .map((l) => l.split(':')[0]),
      ['config', 'custom_fields', 'interfaces', 'name', 'tags'],
    );
    // A multi-line value is a block: one line of YAML per line of the value.
    assert.match(text, /^config: \|\n {2}hostname sw1\n {2}interface eth0\n {3}mtu 9000\n/);
    assert.ok(!text.includes('\\n'));
  });

  it("serialises nothing as an empty document (a create's baseline, a delete's branch side), and never folds long lines", () => {
    assert.equal(serializeState(null), '');
    assert.equal(serializeState({}), '{}\n');
    const long = 'word '.repeat(60).trim();
    assert.equal(serializeState({ description: long }), `description: ${long}\n`);
  });

  it('maps an attribute to the line of its key, nested dot paths and array indices included', () => {
    const text = serializeState(DEVICE);
    const lines = text.split('\n');
    const spans = attributeSpans(text);
    const at = (attr: string | null) => lineOfAttribute(spans, attr);
    assert.equal(lines[at('name').line], 'name: sw1');
    assert.equal(lines[at('custom_fields.owner').line], '  owner: netops');
    assert.equal(lines[at('interfaces.1.name').line], '  - name: eth1');
    assert.equal(lines[at('interfaces.0.mtu').line], '  - mtu: 9000');
    assert.deepEqual(at(null), { line: 0, exact: true });
    // Not in this text: its nearest parent that is, else the first line.
    assert.deepEqual(at('custom_fields.site'), { line: at('custom_fields').line, exact: false });
    assert.deepEqual(at('serial'), { line: 0, exact: false });
  });

  it('derives the attribute of a line: the deepest key path whose lines include it', () => {
    const text = serializeState(DEVICE);
    const spans = attributeSpans(text);
    const lines = text.split('\n');
    const lineOf = (s: string) => lines.indexOf(s);
    assert.equal(attributeAtLine(spans, lineOf('  interface eth0')), 'config');
    assert.equal(attributeAtLine(spans, lineOf('custom_fields:')), 'custom_fields');
    assert.equal(attributeAtLine(spans, lineOf('  cost_center: null')), 'custom_fields.cost_center');
    assert.equal(attributeAtLine(spans, lineOf('    name: eth0')), 'interfaces.0.name');
    assert.equal(attributeAtLine(spans, lineOf('tags: []')), 'tags');
    assert.equal(attributeAtLine(spans, lines.length + 5), null);
    assert.deepEqual(attributeSpans(''), []);
    // And back: every key line maps to its own path.
    for (const s of spans) assert.equal(lineOfAttribute(spans, attributeAtLine(spans, s.line)).line, s.line);
  });

  it('says whether a dot path exists in a state', () => {
    assert.equal(hasAttribute(DEVICE, 'custom_fields.owner'), true);
    assert.equal(hasAttribute(DEVICE, 'custom_fields.cost_center'), true);
    assert.equal(hasAttribute(DEVICE, 'interfaces.1.name'), true);
    assert.equal(hasAttribute(DEVICE, 'interfaces.2'), false);
    assert.equal(hasAttribute(DEVICE, 'name.length'), false);
    assert.equal(hasAttribute(DEVICE, 'toString'), false);
    assert.equal(hasAttribute(null, 'name'), false);
  });

  it("decorates a change by its action, or as conflicted, in VS Code's git colours", () => {
    assert.equal(changeKind(makeChange({ id: 1, action: 'create' })), 'added');
    assert.equal(changeKind(makeChange({ id: 1, action: 'update' })), 'modified');
    assert.equal(changeKind(makeChange({ id: 1, action: 'delete' })), 'deleted');
    assert.equal(changeKind(makeChange({ id: 1, action: 'update', conflicts: ['rack'] })), 'conflicted');
    assert.equal(changeKind(makeChange({ id: 1, action: 'update', conflicts: [] })), 'modified');
    assert.deepEqual(
      Object.values(CHANGE_DECORATION).map((d) => d.color),
      [
        'gitDecoration.addedResourceForeground',
        'gitDecoration.modifiedResourceForeground',
        'gitDecoration.deletedResourceForeground',
        'gitDecoration.conflictingResourceForeground',
      ],
    );
  });

  it('shows a thread on the branch side, on the baseline for a delete or an attribute only the baseline has', () => {
    const update = makeChange({ id: 1, original: { name: 'sw1', serial: 'X' }, modified: { name: 'sw1' } });
    assert.equal(threadSide(update, 'name'), 'modified');
    assert.equal(threadSide(update, null), 'modified');
    assert.equal(threadSide(update, 'serial'), 'original');
    assert.equal(threadSide(makeChange({ id: 2, action: 'delete', modified: null }), 'name'), 'original');
    assert.equal(threadSide(makeChange({ id: 3, action: 'create', original: null }), 'name'), 'modified');
  });

  it('titles a diff with the object and what happened to it', () => {
    assert.equal(diffTitle(makeChange({ id: 1, object_repr: 'sw1' })), 'sw1 (Modified)');
    assert.equal(
      diffTitle(makeChange({ id: 1, object_repr: 'sw1', conflicts: ['rack'] })),
      'sw1 (Modified, conflicts with main)',
    );
    assert.equal(diffTitle(makeChange({ id: 1, object_repr: 'sw2', action: 'create' })), 'sw2 (Created)');
    assert.equal(diffTitle(makeChange({ id: 1, object_repr: 'sw1' }), 'main'), 'sw1 (main now ↔ after the merge)');
  });
});
