// package.json declares exactly the commands, views and settings the code registers: the command
// table (extension/core/commands.ts) is what extension/vscode/commands.ts registers, one handler
// per CommandId.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { whenActionAllowed } from '../../extension/core/availability';
import { DOCUMENT_SCHEME } from '../../extension/core/change-documents';
import {
  CATEGORY,
  CHANGE_REQUEST_PANEL,
  COMMANDS,
  COMMENT_CONTROLLER,
  CONTEXT_KEYS,
  REVIEW_CONTAINER,
  VIEW_CONTAINER,
  VIEWS,
} from '../../extension/core/commands';
import { MACHINE_SETTINGS, SETTING_DEFAULTS, SETTING_KEYS } from '../../extension/core/settings';
import { welcomeContributions } from '../../extension/core/welcome';

const ROOT = resolve(__dirname, '../..');
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
const contributes = pkg.contributes;

interface MenuEntry {
  command: string;
  when?: string;
  group?: string;
}
const allMenus: [string, MenuEntry][] = Object.entries(contributes.menus as Record<string, MenuEntry[]>).flatMap(
  ([menu, entries]) => entries.map((e) => [menu, e] as [string, MenuEntry]),
);
const commandIds = new Set<string>(COMMANDS.map((c) => c.id));
const viewIds = new Set<string>(Object.values(VIEWS).map((v) => v.id));

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sourceFiles(path) : path.endsWith('.ts') ? [path] : [];
  });
}

describe('extension: manifest', () => {
  it('declares every command of the table, and only those, under the category', () => {
    assert.deepEqual(
      contributes.commands.map((c: { command: string }) => c.command),
      COMMANDS.map((c) => c.id),
    );
    for (const spec of COMMANDS) {
      const declared = contributes.commands.find((c: { command: string }) => c.command === spec.id);
      assert.equal(declared.title, spec.title, spec.id);
      assert.equal(declared.category, CATEGORY, spec.id);
      assert.equal(declared.icon, `$(${spec.icon})`, spec.id);
    }
  });

  it('registers commands only through the table', () => {
    const registrations = sourceFiles(join(ROOT, 'extension')).flatMap((file) => {
      const text = readFileSync(file, 'utf8');
      return (text.match(/registerCommand\(/g) ?? []).map(() => file.slice(ROOT.length + 1));
    });
    assert.deepEqual(registrations, ['extension/vscode/commands.ts']);
    const commandsTs = readFileSync(join(ROOT, 'extension/vscode/commands.ts'), 'utf8');
    assert.match(commandsTs, /return COMMANDS\.map\(\(spec\) =>\s*vscode\.commands\.registerCommand\(spec\.id/);
    assert.match(commandsTs, /const handlers: Record<CommandId, Handler> = \{/);
  });

  it('puts in menus only commands of the table, hides from the palette exactly those that are not for it', () => {
    for (const [menu, entry] of allMenus)
      assert.ok(commandIds.has(entry.command), `${menu}: unknown command ${entry.command}`);
    const hidden = new Set(
      contributes.menus.commandPalette.filter((e: MenuEntry) => e.when === 'false').map((e: MenuEntry) => e.command),
    );
    assert.deepEqual(
      [...hidden].sort(),
      COMMANDS.filter((c) => !c.palette)
        .map((c) => c.id)
        .sort(),
    );
  });

  it('shows a change request command on a tree item only when the service allows its action', () => {
    const itemMenus = contributes.menus['view/item/context'] as MenuEntry[];
    for (const spec of COMMANDS) {
      if (!('action' in spec)) continue;
      const entries = itemMenus.filter((e) => e.command === spec.id);
      assert.ok(entries.length > 0, `${spec.id} is in no item menu`);
      for (const e of entries)
        assert.ok(
          e.when?.includes(whenActionAllowed(spec.action)),
          `${spec.id}: when "${e.when}" lacks ${whenActionAllowed(spec.action)}`,
        );
    }
  });

  it('declares the containers and exactly the views the code creates, each in its container with a welcome text; Changed Objects has a container of its own', () => {
    assert.deepEqual(
      contributes.viewsContainers.activitybar.map((c: { id: string; title: string }) => [c.id, c.title]),
      [
        [VIEW_CONTAINER, 'Change Control'],
        [REVIEW_CONTAINER, 'Change Review'],
      ],
    );
    assert.deepEqual(Object.keys(contributes.views), [VIEW_CONTAINER, REVIEW_CONTAINER]);
    assert.deepEqual(
      Object.entries(contributes.views).flatMap(([container, views]) =>
        (views as { id: string; name: string }[]).map((v) => [v.id, v.name, container]),
      ),
      Object.values(VIEWS).map((v) => [v.id, v.name, v.container]),
    );
    assert.deepEqual(
      contributes.views[REVIEW_CONTAINER].map((v: { id: string }) => v.id),
      [VIEWS.changedObjects.id],
    );
    const welcomed = new Set(contributes.viewsWelcome.map((w: { view: string }) => w.view));
    for (const w of contributes.viewsWelcome) assert.ok(viewIds.has(w.view), `welcome for unknown view ${w.view}`);
    for (const id of viewIds) assert.ok(welcomed.has(id), `no welcome text for ${id}`);
    for (const { icon } of contributes.viewsContainers.activitybar)
      assert.ok(statSync(join(ROOT, icon)).isFile(), icon);
  });

  it('has a "not connected" welcome with Sign In and a "no change requests" welcome', () => {
    const crWelcome = contributes.viewsWelcome.filter((w: { view: string }) => w.view === VIEWS.changeRequests.id);
    const signedOut = crWelcome.find((w: { when: string }) => w.when === `${CONTEXT_KEYS.connection} == signedOut`);
    assert.match(signedOut.contents, /\[Sign In\]\(command:changeControl\.signIn\)/);
    assert.ok(crWelcome.some((w: { when: string }) => w.when.includes(CONTEXT_KEYS.empty)));
  });

  it('refers in when clauses and welcome links only to known views, context keys and commands', () => {
    const known = new Set<string>([...viewIds, ...Object.values(CONTEXT_KEYS), COMMENT_CONTROLLER]);
    const whens = [
      ...allMenus.map(([, e]) => e.when ?? ''),
      ...contributes.viewsWelcome.map((w: { when: string }) => w.when),
      ...contributes.keybindings.map((k: { when: string }) => k.when),
    ];
    for (const when of whens) {
      for (const name of when.replace(/\/[^/]*\//g, '').match(/changeControl\.[A-Za-z.]+/g) ?? [])
        assert.ok(known.has(name), `"${when}" names unknown ${name}`);
    }
    for (const w of contributes.viewsWelcome) {
      for (const m of (w.contents as string).matchAll(/\(command:([^)?]+)/g))
        assert.ok(
          commandIds.has(m[1]) || m[1].startsWith('workbench.action.'),
          `welcome links unknown command ${m[1]}`,
        );
    }
  });

  it('declares exactly the welcome content of core/welcome.ts (which welcome shows when is tested there)', () => {
    assert.deepEqual(contributes.viewsWelcome, welcomeContributions());
  });

  it("offers the comment widget's actions only on its own threads, by the context values core/comment-threads.ts sets", () => {
    for (const menu of [
      'comments/commentThread/context',
      'comments/commentThread/title',
      'comments/comment/title',
      'comments/comment/context',
    ]) {
      const entries = contributes.menus[menu] as MenuEntry[];
      assert.ok(entries.length > 0, menu);
      for (const e of entries)
        assert.ok(e.when?.startsWith(`commentController == ${COMMENT_CONTROLLER}`), `${menu}: ${e.command}`);
    }
    const titles = contributes.menus['comments/comment/title'] as MenuEntry[];
    const edits = titles.filter((e) => e.command !== 'changeControl.applySuggestion').map((e) => [e.command, e.when]);
    for (const [, when] of edits) assert.match(when!, /comment =~ \/;mine;\//);
    // Apply Suggestion: on a suggestion the request lets the user apply now (not applied, not outdated).
    const apply = titles.find((e) => e.command === 'changeControl.applySuggestion')!;
    assert.match(apply.when!, /comment =~ \/;applicable;\//);
    const resolve = (contributes.menus['comments/commentThread/title'] as MenuEntry[]).find(
      (e) => e.command === 'changeControl.resolveThread',
    )!;
    assert.match(resolve.when!, /;open;/);
    assert.match(resolve.when!, /;posted;/);
  });

  it('binds Next and Previous Change to keys where changes are reviewed', () => {
    const bound = Object.fromEntries(
      contributes.keybindings.map((k: { command: string; key: string }) => [k.command, k.key]),
    );
    assert.deepEqual(bound, { 'changeControl.nextChange': 'alt+n', 'changeControl.previousChange': 'alt+p' });
    for (const k of contributes.keybindings) {
      assert.ok(commandIds.has(k.command), k.command);
      assert.match(k.when, /changeControl\.hasChanges/);
    }
  });

  it('builds no schema before zod is told not to compile parsers (which reads navigator, an error in the extension host)', () => {
    const entry = readFileSync(join(ROOT, 'extension/extension.ts'), 'utf8');
    const firstImport = /^import .*$/m.exec(entry)?.[0];
    assert.equal(firstImport, "import './zod-setup';");
    const probe = [
      "Object.defineProperty(globalThis, 'navigator', { configurable: true, get() { throw new Error('navigator was read'); } });",
      "await import('./extension/zod-setup.ts');",
      "const cc = await import('./contract/api/change-control.ts');",
      "const br = await import('./contract/api/branching.ts');",
      'const { changeComment } = cc.default ?? cc; const { changeDiff } = br.default ?? br;',
      'changeComment.safeParse({}); changeDiff.safeParse({ id: 1 });',
      "console.log('ok');",
    ].join('\n');
    const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', probe], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    assert.equal(out.trim(), 'ok');
  });

  it('declares exactly the settings the code reads, with the same defaults', () => {
    const props = contributes.configuration.properties;
    assert.deepEqual(Object.keys(props).sort(), Object.values(SETTING_KEYS).sort());
    for (const [name, key] of Object.entries(SETTING_KEYS)) {
      assert.deepEqual(props[key].default, SETTING_DEFAULTS[name as keyof typeof SETTING_DEFAULTS], key);
    }
    assert.equal(
      props[SETTING_KEYS.nodePath].scope,
      'machine',
      'a workspace must not choose the program the extension runs',
    );
  });

  it('makes every setting that decides where the token goes machine-scoped (a workspace cannot override it)', () => {
    const props = contributes.configuration.properties;
    for (const key of MACHINE_SETTINGS) assert.equal(props[key].scope, 'machine', key);
    assert.ok(MACHINE_SETTINGS.includes(SETTING_KEYS.serverUrl));
  });

  it('activates where needed: at startup (status bar, notifications), to restore panels, and to restore documents of changed objects', () => {
    assert.deepEqual(pkg.activationEvents, [
      'onStartupFinished',
      `onWebviewPanel:${CHANGE_REQUEST_PANEL}`,
      `onFileSystem:${DOCUMENT_SCHEME}`,
    ]);
    assert.equal(pkg.main, './dist/extension.js');
  });

  it('declares exactly the API proposals of the proposed functions the code calls (the editor lends only those)', () => {
    const source = readFileSync(join(ROOT, 'extension/vscode/branch-search.ts'), 'utf8');
    const called = [...source.matchAll(/vscode\.workspace\.register(\w+SearchProvider2)\?\./g)].map(
      (m) => m[1]![0]!.toLowerCase() + m[1]!.slice(1),
    );
    assert.deepEqual(called.sort(), ['fileSearchProvider2', 'textSearchProvider2']);
    assert.deepEqual([...pkg.enabledApiProposals].sort(), called);
  });
});
