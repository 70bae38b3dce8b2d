// A small stand-in for the `vscode` module: enough of the API for the extension to activate in
// plain Node (views, commands, the comment controller, the document provider, settings, secrets),
// recording what it registers. It answers no question about the workbench beyond that: it has no
// editors, no documents, and an empty configuration (so the extension would use its bundled
// service; nothing here starts it). Used by the activation probe (activation-probe.ts).

type Listener<T> = (e: T) => unknown;

export interface FakeVscodeRecord {
  commands: string[];
  treeViews: string[];
  commentControllers: string[];
  fileSystemProviders: string[];
  webviewSerializers: string[];
  outputChannels: string[];
  /** `setContext` keys and the other commands executed, in order. */
  executed: string[];
}

class Disposable {
  static from(...items: { dispose(): unknown }[]): Disposable {
    return new Disposable(() => items.forEach((d) => d.dispose()));
  }
  constructor(private readonly fn: () => unknown) {}
  dispose(): void {
    this.fn();
  }
}

class EventEmitter<T> {
  private listeners = new Set<Listener<T>>();
  readonly event = (listener: Listener<T>, thisArg?: unknown): Disposable => {
    const bound: Listener<T> = (e) => listener.call(thisArg, e);
    this.listeners.add(bound);
    return new Disposable(() => this.listeners.delete(bound));
  };
  fire(e: T): void {
    for (const l of [...this.listeners]) l(e);
  }
  dispose(): void {
    this.listeners.clear();
  }
}

const noEvent = <T>(_l: Listener<T>) => new Disposable(() => undefined);

class Uri {
  private constructor(
    readonly scheme: string,
    readonly authority: string,
    readonly path: string,
    readonly query: string,
    readonly fragment: string,
  ) {}
  static parse(value: string): Uri {
    const u = new URL(value);
    return new Uri(
      u.protocol.replace(/:$/, ''),
      u.host,
      decodeURIComponent(u.pathname),
      u.search.replace(/^\?/, ''),
      u.hash.replace(/^#/, ''),
    );
  }
  static file(path: string): Uri {
    return new Uri('file', '', path, '', '');
  }
  static from(c: { scheme: string; authority?: string; path?: string; query?: string; fragment?: string }): Uri {
    return new Uri(c.scheme, c.authority ?? '', c.path ?? '', c.query ?? '', c.fragment ?? '');
  }
  static joinPath(base: Uri, ...segments: string[]): Uri {
    return base.with({ path: [base.path.replace(/\/$/, ''), ...segments].join('/') });
  }
  get fsPath(): string {
    return this.path;
  }
  with(c: Partial<{ scheme: string; authority: string; path: string; query: string; fragment: string }>): Uri {
    return new Uri(
      c.scheme ?? this.scheme,
      c.authority ?? this.authority,
      c.path ?? this.path,
      c.query ?? this.query,
      c.fragment ?? this.fragment,
    );
  }
  toString(): string {
    return `${this.scheme}://${this.authority}${this.path}${this.query ? `?${this.query}` : ''}${this.fragment ? `#${this.fragment}` : ''}`;
  }
}

class TreeItem {
  constructor(
    public label: unknown,
    public collapsibleState?: number,
  ) {}
}

class ThemeIcon {
  constructor(
    readonly id: string,
    readonly color?: ThemeColor,
  ) {}
}

class ThemeColor {
  constructor(readonly id: string) {}
}

class MarkdownString {
  isTrusted = false;
  supportThemeIcons = false;
  constructor(
    public value = '',
    supportThemeIcons = false,
  ) {
    this.supportThemeIcons = supportThemeIcons;
  }
  appendMarkdown(v: string): this {
    this.value += v;
    return this;
  }
  appendText(v: string): this {
    this.value += v;
    return this;
  }
}

class Position {
  constructor(
    readonly line: number,
    readonly character: number,
  ) {}
}

class Range {
  readonly start: Position;
  readonly end: Position;
  constructor(sl: number, sc: number, el: number, ec: number) {
    this.start = new Position(sl, sc);
    this.end = new Position(el, ec);
  }
}

class FileSystemError extends Error {
  static FileNotFound = (m?: unknown) => new FileSystemError(`FileNotFound ${String(m ?? '')}`);
  static NoPermissions = (m?: unknown) => new FileSystemError(`NoPermissions ${String(m ?? '')}`);
  static Unavailable = (m?: unknown) => new FileSystemError(`Unavailable ${String(m ?? '')}`);
}

class Memento {
  private values = new Map<string, unknown>();
  keys(): string[] {
    return [...this.values.keys()];
  }
  get<T>(key: string, fallback?: T): T | undefined {
    return (this.values.has(key) ? this.values.get(key) : fallback) as T | undefined;
  }
  update(key: string, value: unknown): Promise<void> {
    if (value === undefined) this.values.delete(key);
    else this.values.set(key, value);
    return Promise.resolve();
  }
  setKeysForSync(): void {}
}

function treeView(id: string, record: FakeVscodeRecord) {
  record.treeViews.push(id);
  return {
    visible: true,
    selection: [] as unknown[],
    badge: undefined as unknown,
    message: undefined as string | undefined,
    description: undefined as string | undefined,
    title: undefined as string | undefined,
    onDidChangeSelection: noEvent,
    onDidChangeVisibility: noEvent,
    onDidExpandElement: noEvent,
    onDidCollapseElement: noEvent,
    onDidChangeCheckboxState: noEvent,
    reveal: () => Promise.resolve(),
    dispose: () => undefined,
  };
}

/** A fresh fake `vscode` module and the record of what the extension registered with it. */
export function fakeVscode(): { api: Record<string, unknown>; record: FakeVscodeRecord } {
  const record: FakeVscodeRecord = {
    commands: [],
    treeViews: [],
    commentControllers: [],
    fileSystemProviders: [],
    webviewSerializers: [],
    outputChannels: [],
    executed: [],
  };
  const disposable = () => new Disposable(() => undefined);
  const configuration = {
    get: <T>(_key: string, fallback?: T) => fallback,
    inspect: () => undefined,
    has: () => false,
    update: () => Promise.resolve(),
  };
  const api = {
    version: '1.100.0',
    Disposable,
    EventEmitter,
    Uri,
    TreeItem,
    ThemeIcon,
    ThemeColor,
    MarkdownString,
    Position,
    Range,
    FileSystemError,
    TreeItemCollapsibleState: { None: 0, Collapsed: 1, Expanded: 2 },
    TreeItemCheckboxState: { Unchecked: 0, Checked: 1 },
    FileChangeType: { Changed: 1, Created: 2, Deleted: 3 },
    FileType: { Unknown: 0, File: 1, Directory: 2, SymbolicLink: 64 },
    FilePermission: { Readonly: 1 },
    StatusBarAlignment: { Left: 1, Right: 2 },
    ViewColumn: { Active: -1, Beside: -2, One: 1 },
    ProgressLocation: { SourceControl: 1, Window: 10, Notification: 15 },
    ConfigurationTarget: { Global: 1, Workspace: 2, WorkspaceFolder: 3 },
    CommentMode: { Editing: 0, Preview: 1 },
    CommentThreadState: { Unresolved: 0, Resolved: 1 },
    CommentThreadCollapsibleState: { Collapsed: 0, Expanded: 1 },
    commands: {
      registerCommand: (id: string) => {
        record.commands.push(id);
        return disposable();
      },
      executeCommand: (id: string, ...args: unknown[]) => {
        record.executed.push(id === 'setContext' ? `setContext ${String(args[0])}` : id);
        return Promise.resolve(undefined);
      },
    },
    window: {
      activeTextEditor: undefined,
      visibleTextEditors: [],
      createOutputChannel: (name: string) => {
        record.outputChannels.push(name);
        const line = () => undefined;
        return {
          name,
          trace: line,
          debug: line,
          info: line,
          warn: line,
          error: line,
          append: line,
          appendLine: line,
          show: line,
          clear: line,
          dispose: line,
          onDidChangeLogLevel: noEvent,
          logLevel: 2,
        };
      },
      createTreeView: (id: string) => treeView(id, record),
      createStatusBarItem: () => ({
        text: '',
        tooltip: '',
        command: undefined,
        show: () => undefined,
        hide: () => undefined,
        dispose: () => undefined,
      }),
      registerWebviewPanelSerializer: (viewType: string) => {
        record.webviewSerializers.push(viewType);
        return disposable();
      },
      registerFileDecorationProvider: disposable,
      tabGroups: { all: [], onDidChangeTabs: noEvent, close: () => Promise.resolve(true) },
      onDidChangeActiveTextEditor: noEvent,
      onDidChangeVisibleTextEditors: noEvent,
      showInformationMessage: () => Promise.resolve(undefined),
      showWarningMessage: () => Promise.resolve(undefined),
      showErrorMessage: () => Promise.resolve(undefined),
      setStatusBarMessage: disposable,
      withProgress: <T>(_o: unknown, task: (p: { report(): void }) => Promise<T>) => task({ report: () => undefined }),
    },
    workspace: {
      textDocuments: [],
      getConfiguration: () => configuration,
      onDidChangeConfiguration: noEvent,
      onDidOpenTextDocument: noEvent,
      onDidCloseTextDocument: noEvent,
      onDidSaveTextDocument: noEvent,
      registerFileSystemProvider: (scheme: string) => {
        record.fileSystemProviders.push(scheme);
        return disposable();
      },
      registerTextDocumentContentProvider: disposable,
    },
    languages: {
      createDiagnosticCollection: (name: string) => ({
        name,
        set: () => undefined,
        delete: () => undefined,
        clear: () => undefined,
        forEach: () => undefined,
        dispose: () => undefined,
      }),
    },
    comments: {
      createCommentController: (id: string) => {
        record.commentControllers.push(id);
        return {
          id,
          commentingRangeProvider: undefined,
          options: undefined,
          reactionHandler: undefined,
          createCommentThread: () => {
            throw new Error('no editor in the fake vscode');
          },
          dispose: () => undefined,
        };
      },
    },
    env: { openExternal: () => Promise.resolve(true), uriScheme: 'vscode', appName: 'Fake' },
    extensions: { getExtension: () => undefined, all: [] },
  };
  return { api, record };
}

/** The ExtensionContext VS Code would pass (global storage under `storage`, no secret stored). */
export function fakeExtensionContext(
  extensionPath: string,
  storage: string,
  packageJSON: unknown,
): Record<string, unknown> {
  const secrets = new Map<string, string>();
  return {
    subscriptions: [] as { dispose(): unknown }[],
    extensionUri: Uri.file(extensionPath),
    extensionPath,
    globalStorageUri: Uri.file(storage),
    globalStoragePath: storage,
    logUri: Uri.file(`${storage}/log`),
    globalState: new Memento(),
    workspaceState: new Memento(),
    secrets: {
      get: (k: string) => Promise.resolve(secrets.get(k)),
      store: (k: string, v: string) => Promise.resolve(void secrets.set(k, v)),
      delete: (k: string) => Promise.resolve(void secrets.delete(k)),
      onDidChange: noEvent,
    },
    extension: { id: 'change-control.change-control', packageJSON, extensionUri: Uri.file(extensionPath) },
    asAbsolutePath: (p: string) => `${extensionPath}/${p}`,
  };
}
