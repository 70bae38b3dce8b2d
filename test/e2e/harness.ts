// Drives a real VS Code (VS Code OSS served by code-server) in Debian's Chromium with
// playwright-core. One VSCode instance = one code-server process with its own fresh user data and
// extensions folders, and one browser page showing the workbench.
//
// Tools come from test/e2e/install-tools.sh (Node 24 + code-server in CC_E2E_TOOLS).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  chromium,
  type Browser,
  type BrowserContext,
  type FrameLocator,
  type Locator,
  type Page,
} from 'playwright-core';

export const REPO_ROOT = path.resolve(__dirname, '..', '..');
export const ARTIFACTS_DIR = path.resolve(
  process.env.CC_E2E_ARTIFACTS || path.join(REPO_ROOT, 'test-artifacts', 'e2e'),
);
export const TOOLS_DIR = path.resolve(
  process.env.CC_E2E_TOOLS || path.join(os.homedir(), '.cache', 'change-control-e2e'),
);
export const NODE24_BIN = path.join(TOOLS_DIR, 'node24', 'node_modules', 'node', 'bin', 'node');
/** The extension's id (publisher.name in package.json). */
export const CHANGE_CONTROL_EXTENSION_ID = 'change-control.change-control';

export const CODE_SERVER_ENTRY = path.join(
  TOOLS_DIR,
  'code-server',
  'node_modules',
  'code-server',
  'out',
  'node',
  'entry.js',
);
export const CHROMIUM_BIN = process.env.CC_E2E_CHROMIUM || '/usr/bin/chromium';

/** Chromium flags: no sandbox (root), no GPU, and no calls home (this machine's network is closed). */
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-dev-shm-usage',
  '--disable-breakpad',
  '--disable-crash-reporter',
  // Resolve no host name at all: the browser can reach 127.0.0.1 and nothing else.
  '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, EXCLUDE localhost',
];

/** Timeouts (ms). Generous: two cores, a cold VS Code and its extension host. */
export const TIMEOUTS = {
  serverStart: 90_000,
  workbench: 120_000,
  ui: 20_000,
  install: 180_000,
};

/** User settings written before start: no workspace trust, nothing that pops up on its own. */
export const DEFAULT_USER_SETTINGS: Record<string, unknown> = {
  'security.workspace.trust.enabled': false,
  'security.workspace.trust.startupPrompt': 'never',
  'security.workspace.trust.banner': 'never',
  'workbench.startupEditor': 'none',
  'workbench.welcomePage.walkthroughs.openOnInstall': false,
  'workbench.tips.enabled': false,
  'workbench.enableExperiments': false,
  'workbench.settings.enableNaturalLanguageSearch': false,
  'workbench.secondarySideBar.defaultVisibility': 'hidden',
  'telemetry.telemetryLevel': 'off',
  'update.mode': 'none',
  'extensions.autoCheckUpdates': false,
  'extensions.autoUpdate': false,
  'extensions.ignoreRecommendations': true,
  'chat.disableAIFeatures': true,
  // code-server announces every port a process listens on (e.g. a service under test).
  'remote.autoForwardPorts': false,
  // Text typed into editors stays as typed (updateUserSettings() writes settings.json in an editor).
  'editor.autoClosingBrackets': 'never',
  'editor.autoClosingQuotes': 'never',
  'editor.autoSurround': 'never',
  'editor.autoIndent': 'none',
  'editor.formatOnType': false,
  'chat.commandCenter.enabled': false,
  'git.enabled': false,
  'git.openRepositoryInParentFolders': 'never',
  'npm.autoDetect': 'off',
  'typescript.disableAutomaticTypeAcquisition': true,
  'window.commandCenter': false,
  'editor.accessibilitySupport': 'off',
  'notebook.experimental.generate': false,
};

/** An extension to install: a packaged .vsix, or an unpacked extension folder (with package.json). */
export type ExtensionSource = { vsix: string } | { folder: string };

/** A rendered row of a tree view (see VSCode.treeRows). */
export interface TreeRow {
  label: string;
  description: string;
  level: number;
  expanded: boolean | null;
}

export interface StartOptions {
  /** Folder to open; default: a new empty temp folder. */
  workspace?: string;
  extensions?: ExtensionSource[];
  /** Merged over DEFAULT_USER_SETTINGS. */
  userSettings?: Record<string, unknown>;
  /**
   * Settings of the machine the extension host runs on (`<user-data>/Machine/settings.json`):
   * in code-server's remote window, settings with `"scope": "machine"` are read only from here.
   */
  machineSettings?: Record<string, unknown>;
  /**
   * Extra environment for code-server and so for the extension host. A `PATH` given here is
   * theirs as it is (by default: the runner's, with Node 24's folder first).
   */
  env?: Record<string, string>;
  /** Files put into the user data folder before code-server starts: relative path → file copied there. */
  userDataFiles?: Record<string, string>;
  /** Where screenshots and logs go (default ARTIFACTS_DIR). */
  artifactsDir?: string;
  viewport?: { width: number; height: number };
  /**
   * Extensions granted VS Code's proposed APIs (`--enable-proposed-api`); default: Change Control,
   * whose quick open and Search over branch folders need them. (code-server 4.139 grants them to
   * every extension that declares them, flag or not.)
   */
  enableProposedApi?: string[];
  /** Keep the temp folder (user data, extensions) after stop, for debugging. Also CC_E2E_KEEP=1. */
  keepTemp?: boolean;
  log?: (line: string) => void;
}

export class E2EError extends Error {
  constructor(
    message: string,
    readonly screenshot?: string,
  ) {
    super(screenshot ? `${message}\n  screenshot: ${screenshot}` : message);
    this.name = 'E2EError';
  }
}

// ------------------------------------------------------------------ processes

/** A free TCP port on 127.0.0.1 (asked from the kernel, then released). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => (addr && typeof addr === 'object' ? resolve(addr.port) : reject(new Error('no port'))));
    });
  });
}

/** Every process below `pid` (read from /proc), deepest first. */
export function descendants(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of safeReaddir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue;
    }
    // pid (comm) state ppid ...; comm may hold spaces and parentheses.
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    const list = children.get(ppid) ?? [];
    list.push(Number(entry));
    children.set(ppid, list);
  }
  const out: number[] = [];
  const walk = (p: number) => {
    for (const c of children.get(p) ?? []) {
      walk(c);
      out.push(c);
    }
  };
  walk(pid);
  return out;
}

function safeReaddir(dir: string): string[] {
  try {
    return fs.readdirSync(dir);
  } catch {
    return [];
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/**
 * Stops a process started detached (its own process group) and everything below it:
 * SIGTERM to the group and to every descendant found in /proc, then SIGKILL after `graceMs`.
 */
export async function killTree(pid: number, graceMs = 5_000): Promise<void> {
  const targets = new Set<number>([pid, ...descendants(pid)]);
  const signalAll = (sig: NodeJS.Signals) => {
    try {
      process.kill(-pid, sig);
    } catch {
      /* group gone */
    }
    for (const p of targets) {
      try {
        process.kill(p, sig);
      } catch {
        /* gone */
      }
    }
  };
  signalAll('SIGTERM');
  const deadline = Date.now() + graceMs;
  while (Date.now() < deadline && [...targets].some(alive)) await sleep(100);
  // Helpers may have been started in the meantime; collect them again before the hard stop.
  for (const p of descendants(pid)) targets.add(p);
  if ([...targets].some(alive)) {
    signalAll('SIGKILL');
    const hardDeadline = Date.now() + 3_000;
    while (Date.now() < hardDeadline && [...targets].some(alive)) await sleep(50);
  }
}

// ------------------------------------------------------------------ code-server

function checkTools(): void {
  const missing = [NODE24_BIN, CODE_SERVER_ENTRY, CHROMIUM_BIN].filter((f) => !fs.existsSync(f));
  if (missing.length) {
    throw new E2EError(`end-to-end tools missing: ${missing.join(', ')}\n  run: bash test/e2e/install-tools.sh`);
  }
}

function codeServerEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ...extra };
  // The project's Node (and tsx's loader flags) must not leak into VS Code's Node 24 processes.
  delete env.NODE_OPTIONS;
  for (const k of Object.keys(env)) {
    if (k.startsWith('VSCODE_') || k.startsWith('ELECTRON_') || k.startsWith('npm_')) delete env[k];
  }
  if (extra.PATH === undefined) env.PATH = `${path.dirname(NODE24_BIN)}:${env.PATH ?? ''}`;
  return env;
}

/** Runs code-server's CLI (e.g. --install-extension) to completion. */
function codeServerCli(args: string[], env: NodeJS.ProcessEnv, timeoutMs = TIMEOUTS.install): string {
  const res = spawnSync(NODE24_BIN, [CODE_SERVER_ENTRY, ...args], { env, encoding: 'utf8', timeout: timeoutMs });
  const out = `${res.stdout ?? ''}${res.stderr ?? ''}`;
  if (res.error || res.status !== 0) {
    throw new E2EError(
      `code-server ${args.join(' ')} failed (status ${res.status}${res.error ? `, ${res.error.message}` : ''}):\n${out}`,
    );
  }
  return out;
}

function readManifest(folder: string): { publisher: string; name: string; version: string } {
  const file = path.join(folder, 'package.json');
  if (!fs.existsSync(file)) throw new E2EError(`not an extension folder (no package.json): ${folder}`);
  const pkg = JSON.parse(fs.readFileSync(file, 'utf8'));
  for (const k of ['publisher', 'name', 'version']) {
    if (typeof pkg[k] !== 'string') throw new E2EError(`${file}: "${k}" missing`);
  }
  return pkg;
}

async function waitForHealthz(url: string, proc: ChildProcess, logFile: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastErr = '';
  while (Date.now() < deadline) {
    if (proc.exitCode !== null || proc.signalCode !== null) {
      throw new E2EError(
        `code-server exited (${proc.exitCode ?? proc.signalCode}) before answering; log ${logFile}:\n${tail(logFile)}`,
      );
    }
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(2_000) });
      if (res.ok) return;
      lastErr = `HTTP ${res.status}`;
    } catch (e) {
      lastErr = (e as Error).message;
    }
    await sleep(250);
  }
  throw new E2EError(
    `code-server did not answer ${url} within ${timeoutMs} ms (${lastErr}); log ${logFile}:\n${tail(logFile)}`,
  );
}

function tail(file: string, lines = 30): string {
  try {
    return fs.readFileSync(file, 'utf8').split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

function safeName(s: string): string {
  return (
    s
      .replace(/[^A-Za-z0-9._-]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 100) || 'shot'
  );
}

/** Exact-or-pattern text matching used by the UI helpers. */
function textMatcher(text: string | RegExp): RegExp {
  if (text instanceof RegExp) return text;
  return new RegExp(`^\\s*${text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\s*$`);
}

/** Waits until the locator's text matches (substring for a string); returns the text. */
export async function expectText(locator: Locator, text: string | RegExp, timeout = TIMEOUTS.ui): Promise<string> {
  const deadline = Date.now() + timeout;
  let last = '';
  while (Date.now() < deadline) {
    last = (
      await locator
        .first()
        .innerText({ timeout: 1_000 })
        .catch(() => last)
    ).trim();
    if (typeof text === 'string' ? last.includes(text) : text.test(last)) return last;
    await sleep(200);
  }
  throw new Error(`expected ${locator} to show ${text}, it shows ${JSON.stringify(last)}`);
}

/** Throws with both values unless they are deeply equal (JSON). */
export function assertEqual<T>(actual: T, expected: T, what: string): void {
  if (JSON.stringify(actual) !== JSON.stringify(expected)) {
    throw new Error(`${what}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`);
  }
}

// ------------------------------------------------------------------ quick input, as the page sees it

/** A text pattern the page can rebuild (RegExp source and flags). */
interface PagePattern {
  source: string;
  flags: string;
}

/**
 * What a wait on the quick input widget waits for. The palette is the quick input whose value
 * starts with ">" (the command palette's prefix); every other open quick input is a QuickPick or
 * InputBox of an extension or of VS Code.
 */
type QuickInputCondition =
  /** Open (not closing), palette or not, holding `value`, listing a row / at least `minRows` rows, saying `message`. */
  | { kind: 'open'; palette: boolean; value?: string; row?: PagePattern; minRows?: number; message?: PagePattern }
  /** No longer showing `value`: the palette accepted the command (closed, or another quick input took its place). */
  | { kind: 'left'; value: string }
  /** A quick input other than the palette closed after event `since`, and none is open now. */
  | { kind: 'dismissed'; since: number }
  /** The quick input open at event `since` closed, or another one (another title or placeholder) took its place. */
  | { kind: 'moved'; since: number; fingerprint: string };

/** What the quick input widget shows now. */
export interface QuickInputState {
  open: boolean;
  palette: boolean;
  value: string;
  title: string;
  placeholder: string;
  message: string;
  labels: string[];
  seq: number;
}

/**
 * Installed in every document of the page (an init script): watches the quick input widget and
 * numbers its openings and closings, so that a wait can tell "not shown yet" from "shown and
 * closed again before it was answered" (a quick input closes when focus leaves it). VS Code hides
 * the widget with `display: none`, after a short closing animation (class
 * `quick-input-widget-closing`, inert) when motion is on: closing counts as closed.
 * Plain JavaScript in a string: it runs in the page as written.
 */
const QUICK_INPUT_TRACKER = `(() => {
  if (window.__ccQuickInput) return;
  const t = { seq: 0, open: false, hides: [] };
  let watched = null;
  const widget = () => (watched && watched.isConnected ? watched : document.querySelector('.quick-input-widget'));
  const isOpen = (w) => !!w && w.style.display !== 'none' && !w.classList.contains('quick-input-widget-closing') && w.getClientRects().length > 0;
  const read = () => {
    const w = widget();
    const q = (sel) => (w ? w.querySelector(sel) : null);
    const text = (sel) => { const el = q(sel); return el && el.textContent ? el.textContent.trim() : ''; };
    const input = q('.quick-input-box input');
    const value = input ? input.value : '';
    const labels = w ? Array.from(w.querySelectorAll('.quick-input-list .monaco-list-row')).map((r) => {
      const l = r.querySelector('.label-name'); return l && l.textContent ? l.textContent.trim() : '';
    }) : [];
    return { open: isOpen(w), palette: value.startsWith('>'), value, title: text('.quick-input-title'),
      placeholder: input ? input.getAttribute('placeholder') || '' : '', message: text('.quick-input-message'), labels, seq: t.seq };
  };
  const note = () => {
    const open = isOpen(widget());
    if (open === t.open) return;
    const s = read();
    t.open = open; t.seq += 1;
    if (!open) { t.hides.push({ seq: t.seq, palette: s.palette }); if (t.hides.length > 100) t.hides.shift(); }
  };
  const onWidget = new MutationObserver(note);
  new MutationObserver(() => {
    if (watched && watched.isConnected) return;
    const w = document.querySelector('.quick-input-widget');
    if (!w) return;
    watched = w;
    onWidget.observe(w, { attributes: true, attributeFilter: ['style', 'class'] });
    note();
  }).observe(document, { childList: true, subtree: true });
  const re = (p) => new RegExp(p.source, p.flags);
  const fingerprint = (s) => s.title + '|' + s.placeholder;
  const matches = (s, c) => {
    switch (c.kind) {
      case 'open':
        return s.open && s.palette === c.palette && (c.value === undefined || s.value === c.value)
          && (c.row === undefined || s.labels.some((l) => re(c.row).test(l)))
          && (c.minRows === undefined || s.labels.length >= c.minRows)
          && (c.message === undefined || re(c.message).test(s.message));
      case 'left': return !(s.open && s.value === c.value);
      case 'dismissed': return !s.open && t.hides.some((h) => h.seq > c.since && !h.palette);
      case 'moved': return t.hides.some((h) => h.seq > c.since) || (s.open && fingerprint(s) !== c.fingerprint);
      default: return false;
    }
  };
  t.read = read;
  /** 1 + the index of the first condition that holds, 0 when none does. */
  t.test = (conds) => { const s = read(); for (let i = 0; i < conds.length; i++) if (matches(s, conds[i])) return i + 1; return 0; };
  window.__ccQuickInput = t;
})()`;

function pagePattern(p: RegExp): PagePattern {
  return { source: p.source, flags: p.flags };
}

/** A RegExp as it is, or a string as a case-insensitive substring (as Playwright's `hasText`). */
function containsPattern(text: string | RegExp): PagePattern {
  return pagePattern(typeof text === 'string' ? new RegExp(text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), 'i') : text);
}

/** What tells one open quick input from the next (the tracker compares the same). */
function fingerprintOf(s: QuickInputState): string {
  return `${s.title}|${s.placeholder}`;
}

/** How long a quick input a command should open may take to appear before the command runs again. */
const REOPEN_AFTER_MS = 10_000;
/** How many times a command runs again when the quick input it should open did not appear or was closed. */
const MAX_RERUNS = 2;

// ------------------------------------------------------------------ the instance

export class VSCode {
  /** Selectors checked against VS Code OSS 1.139 as served by code-server 4.139.1. */
  static readonly sel = {
    workbench: '.monaco-workbench',
    quickInput: '.quick-input-widget',
    quickInputBox: '.quick-input-widget .quick-input-box input',
    quickInputRow: '.quick-input-widget .quick-input-list .monaco-list-row',
    quickInputMessage: '.quick-input-widget .quick-input-message',
    notificationToast: '.notifications-toasts .notification-toast',
    notificationItem: '.notification-list-item',
    notificationMessage: '.notification-list-item-message',
    notificationButton: '.notification-list-item-buttons-container .monaco-button',
    notificationCentre: '.notifications-center',
    dialog: '.monaco-dialog-box',
    dialogMessage: '.monaco-dialog-box .dialog-message-text',
    dialogButton: '.monaco-dialog-box .dialog-buttons .monaco-button',
    treeRow: '.monaco-list-row[role="treeitem"]',
    activityBarItem: '.part.activitybar .action-item a.action-label',
    paneHeader: '.pane-header',
    webviewOuter: 'iframe.webview',
    webviewInner: 'iframe#active-frame',
    tab: '.tabs-container .tab',
  } as const;

  private constructor(
    readonly page: Page,
    readonly browser: Browser,
    readonly context: BrowserContext,
    readonly proc: ChildProcess,
    readonly port: number,
    readonly url: string,
    readonly workspace: string,
    readonly tempRoot: string,
    readonly userDataDir: string,
    readonly extensionsDir: string,
    readonly artifactsDir: string,
    private readonly keepTemp: boolean,
    private readonly log: (line: string) => void,
  ) {}

  private stopped = false;
  private shotCounter = 0;
  private readonly logStreams: fs.WriteStream[] = [];
  /** Prefix of failure screenshots (the runner sets it to the current scenario's name). */
  label = '';

  /** Starts code-server with fresh folders, installs the extensions, opens the workbench. */
  static async start(opts: StartOptions = {}): Promise<VSCode> {
    checkTools();
    const log = opts.log ?? ((l: string) => process.stdout.write(`[e2e] ${l}\n`));
    const artifactsDir = path.resolve(opts.artifactsDir ?? ARTIFACTS_DIR);
    fs.mkdirSync(artifactsDir, { recursive: true });

    const tempRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'cc-e2e-'));
    const userDataDir = path.join(tempRoot, 'user-data');
    const extensionsDir = path.join(tempRoot, 'extensions');
    const workspace = path.resolve(opts.workspace ?? path.join(tempRoot, 'workspace'));
    for (const d of [path.join(userDataDir, 'User'), extensionsDir, workspace]) fs.mkdirSync(d, { recursive: true });
    const settings = { ...DEFAULT_USER_SETTINGS, ...(opts.userSettings ?? {}) };
    fs.writeFileSync(path.join(userDataDir, 'User', 'settings.json'), JSON.stringify(settings, null, 2));
    for (const [relative, source] of Object.entries(opts.userDataFiles ?? {})) {
      const target = path.join(userDataDir, relative);
      fs.mkdirSync(path.dirname(target), { recursive: true });
      fs.copyFileSync(source, target);
    }
    if (opts.machineSettings && Object.keys(opts.machineSettings).length) {
      fs.mkdirSync(path.join(userDataDir, 'Machine'), { recursive: true });
      fs.writeFileSync(
        path.join(userDataDir, 'Machine', 'settings.json'),
        JSON.stringify(opts.machineSettings, null, 2),
      );
    }

    // code-server writes a config file, logs and a device id under XDG folders: keep them in the temp folder.
    const env = codeServerEnv({
      XDG_CONFIG_HOME: path.join(tempRoot, 'xdg-config'),
      XDG_DATA_HOME: path.join(tempRoot, 'xdg-data'),
      XDG_CACHE_HOME: path.join(tempRoot, 'xdg-cache'),
      // No extension gallery (code-server defaults to open-vsx.org): nothing leaves 127.0.0.1.
      EXTENSIONS_GALLERY: '{}',
      ...(opts.env ?? {}),
    });
    const configFile = path.join(tempRoot, 'code-server.yaml');
    fs.writeFileSync(configFile, 'auth: none\n');
    const baseArgs = ['--config', configFile, '--user-data-dir', userDataDir, '--extensions-dir', extensionsDir];
    try {
      VSCode.installExtensions(opts.extensions ?? [], baseArgs, extensionsDir, env, log);
    } catch (e) {
      if (!(opts.keepTemp ?? process.env.CC_E2E_KEEP === '1')) fs.rmSync(tempRoot, { recursive: true, force: true });
      throw e;
    }

    const port = await freePort();
    const logFile = path.join(artifactsDir, 'code-server.log');
    const logFd = fs.openSync(logFile, 'w');
    const args = [
      CODE_SERVER_ENTRY,
      '--auth',
      'none',
      '--bind-addr',
      `127.0.0.1:${port}`,
      '--disable-telemetry',
      '--disable-update-check',
      '--disable-workspace-trust',
      '--disable-getting-started-override',
      ...(opts.enableProposedApi ?? [CHANGE_CONTROL_EXTENSION_ID]).flatMap((id) => ['--enable-proposed-api', id]),
      ...baseArgs,
      workspace,
    ];
    log(`starting code-server on 127.0.0.1:${port} (log ${path.relative(process.cwd(), logFile)})`);
    const proc = spawn(NODE24_BIN, args, { env, detached: true, stdio: ['ignore', logFd, logFd] });
    fs.closeSync(logFd);
    // Last resort if the test process dies without stop(): no stray code-server.
    const onExit = () => {
      try {
        process.kill(-proc.pid!, 'SIGKILL');
      } catch {
        /* gone */
      }
    };
    process.once('exit', onExit);

    let browser: Browser | undefined;
    let vscode: VSCode | undefined;
    try {
      await waitForHealthz(`http://127.0.0.1:${port}/healthz`, proc, logFile, TIMEOUTS.serverStart);
      browser = await chromium.launch({
        executablePath: CHROMIUM_BIN,
        headless: true,
        args: CHROMIUM_ARGS,
        timeout: 60_000,
        // Chromium's crash handler and caches follow XDG: keep them out of $HOME too.
        env: {
          ...process.env,
          XDG_CONFIG_HOME: path.join(tempRoot, 'xdg-config'),
          XDG_CACHE_HOME: path.join(tempRoot, 'xdg-cache'),
        },
      });
      const context = await browser.newContext({ viewport: opts.viewport ?? { width: 1440, height: 900 } });
      context.setDefaultTimeout(TIMEOUTS.ui);
      // Anything the page asks of another host is refused and logged (there should be none).
      const offHost = fs.createWriteStream(path.join(artifactsDir, 'browser-blocked-requests.log'));
      await context.route(
        (u) => /^(https?|wss?):/.test(u.protocol) && !['127.0.0.1', 'localhost'].includes(u.hostname),
        (route) => {
          offHost.write(`${route.request().url()}\n`);
          return route.abort('blockedbyclient');
        },
      );
      await context.addInitScript({ content: QUICK_INPUT_TRACKER });
      const page = await context.newPage();
      const consoleLog = fs.createWriteStream(path.join(artifactsDir, 'browser-console.log'));
      page.on('console', (m) => consoleLog.write(`[${m.type()}] ${m.text()}\n`));
      page.on('pageerror', (e) => consoleLog.write(`[pageerror] ${e.message}\n`));
      const url = `http://127.0.0.1:${port}/?folder=${encodeURIComponent(workspace)}`;
      const started = new VSCode(
        page,
        browser,
        context,
        proc,
        port,
        url,
        workspace,
        tempRoot,
        userDataDir,
        extensionsDir,
        artifactsDir,
        opts.keepTemp ?? process.env.CC_E2E_KEEP === '1',
        log,
      );
      vscode = started;
      started.logStreams.push(offHost, consoleLog);
      process.removeListener('exit', onExit);
      process.once('exit', () => started.killNow());
      await started.openWorkbench();
      return started;
    } catch (e) {
      if (vscode) {
        await vscode.stop();
      } else {
        try {
          await browser?.close();
        } catch {
          /* ignore */
        }
        await killTree(proc.pid!);
        process.removeListener('exit', onExit);
        if (!(opts.keepTemp ?? process.env.CC_E2E_KEEP === '1')) fs.rmSync(tempRoot, { recursive: true, force: true });
      }
      throw e;
    }
  }

  /** Installs .vsix files with code-server's CLI, then copies unpacked folders in. */
  private static installExtensions(
    extensions: ExtensionSource[],
    baseArgs: string[],
    extensionsDir: string,
    env: NodeJS.ProcessEnv,
    log: (line: string) => void,
  ): void {
    // Packaged extensions first, through code-server's CLI (which writes extensions.json)...
    for (const ext of extensions) {
      if (!('vsix' in ext)) continue;
      const vsix = path.resolve(ext.vsix);
      log(`installing ${vsix}`);
      const out = codeServerCli([...baseArgs, '--install-extension', vsix, '--force'], env);
      if (!/successfully installed/i.test(out)) throw new E2EError(`installing ${vsix} printed no success:\n${out}`);
    }
    // ...then unpacked folders: copied in and listed in extensions.json, since VS Code loads only
    // the extensions listed there once that file exists.
    for (const ext of extensions) {
      if (!('folder' in ext)) continue;
      const src = path.resolve(ext.folder);
      const m = readManifest(src);
      const id = `${m.publisher}.${m.name}`.toLowerCase();
      const rel = `${id}-${m.version}`;
      const dest = path.join(extensionsDir, rel);
      log(`copying ${src} -> ${dest}`);
      fs.cpSync(src, dest, { recursive: true, dereference: true });
      const listFile = path.join(extensionsDir, 'extensions.json');
      const list: { identifier: { id: string } }[] = fs.existsSync(listFile)
        ? JSON.parse(fs.readFileSync(listFile, 'utf8'))
        : [];
      const entry = {
        identifier: { id },
        version: m.version,
        location: { $mid: 1, fsPath: dest, external: `file://${dest}`, path: dest, scheme: 'file' },
        relativeLocation: rel,
        metadata: { installedTimestamp: Date.now(), pinned: true, source: 'vsix' },
      };
      fs.writeFileSync(listFile, JSON.stringify([...list.filter((e) => e.identifier.id !== id), entry]));
    }
  }

  private async openWorkbench(): Promise<void> {
    const t0 = Date.now();
    await this.page.goto(this.url, { waitUntil: 'domcontentloaded', timeout: TIMEOUTS.workbench });
    try {
      await this.page.locator(VSCode.sel.workbench).waitFor({ state: 'visible', timeout: TIMEOUTS.workbench });
      // The status bar and activity bar come once the workbench has laid itself out.
      await this.page.locator('.part.statusbar').waitFor({ state: 'visible', timeout: TIMEOUTS.workbench });
      await this.page.locator('.part.activitybar').waitFor({ state: 'visible', timeout: TIMEOUTS.workbench });
    } catch (e) {
      throw await this.failure(`workbench did not appear at ${this.url}: ${(e as Error).message}`, 'workbench-missing');
    }
    // Restricted Mode would disable the extension under test: say so at once.
    const status = await this.page
      .locator('.part.statusbar')
      .innerText()
      .catch(() => '');
    if (/Restricted Mode/i.test(status)) {
      throw await this.failure('the workspace opened in Restricted Mode (workspace trust is on)', 'restricted-mode');
    }
    this.log(`workbench up in ${Date.now() - t0} ms`);
  }

  // ---------------------------------------------------------------- screenshots and failures

  /** Full-page screenshot into the artifacts folder; returns its path. */
  async screenshot(name: string): Promise<string> {
    this.shotCounter += 1;
    const file = path.join(this.artifactsDir, `${String(this.shotCounter).padStart(2, '0')}-${safeName(name)}.png`);
    await this.page.screenshot({ path: file, timeout: 15_000 });
    return file;
  }

  /** An error that carries a screenshot of the moment it happened. */
  async failure(message: string, shotName = 'failure'): Promise<E2EError> {
    let shot: string | undefined;
    try {
      shot = await this.screenshot(`FAIL-${this.label ? `${this.label}-` : ''}${shotName}`);
    } catch {
      /* page gone */
    }
    return new E2EError(message, shot);
  }

  /** Runs `fn`; on error rethrows with a screenshot and what was being done. */
  async step<T>(what: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (e) {
      if (e instanceof E2EError) throw e;
      throw await this.failure(`${what}: ${(e as Error).message.split('\n')[0]}`, what);
    }
  }

  // ---------------------------------------------------------------- keyboard focus

  /** Gives keyboard focus back to the workbench (out of a webview or an input), closing pickers. */
  async focusWorkbench(): Promise<void> {
    if ((await this.quickInputState()).open) await this.page.keyboard.press('Escape');
    // Blurring the focused element of the main document takes focus out of a webview iframe
    // (and out of inputs) without clicking anything; key presses then reach the workbench.
    await this.page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
  }

  // ---------------------------------------------------------------- command palette, quick input

  /**
   * The palette command run last by `runCommand`, with the tracker's event number from just
   * before it ran, while the quick input it opens is not answered yet: `quickPick` and
   * `inputBox` run it again when that quick input does not come or closes unanswered.
   */
  private lastCommand: { title: string | RegExp; mark: number } | undefined;

  /**
   * Runs a command from the palette by its full title as shown there ("Category: Title"),
   * matched exactly (or by a RegExp). Returns once the palette has taken the command (it closed,
   * or the command's own quick input took its place); a palette that did not open, lost the
   * typed text, lacked the row or did not take the click is opened again (three attempts).
   */
  async runCommand(title: string | RegExp): Promise<void> {
    await this.step(`run command ${title}`, async () => {
      this.lastCommand = { title, mark: await this.paletteRun(title) };
    });
  }

  /** Runs a palette command the harness itself needs (no quick input of it is waited for). */
  private async runOwnCommand(title: string | RegExp): Promise<void> {
    await this.step(`run command ${title}`, async () => {
      await this.paletteRun(title);
      this.lastCommand = undefined;
    });
  }

  /** The palette part of `runCommand`; returns the tracker's event number from before the click. */
  private async paletteRun(title: string | RegExp): Promise<number> {
    const want = textMatcher(title);
    const query = `>${typeof title === 'string' ? title : title.source.replace(/[\\^$]/g, '')}`;
    const input = this.page.locator(VSCode.sel.quickInputBox);
    let why = '';
    for (let attempt = 1; attempt <= 3; attempt += 1) {
      if (attempt > 1)
        this.log(`  ${this.label ? `${this.label}: ` : ''}palette for ${want}: ${why}; opening it again`);
      const patience = attempt < 3 ? 5_000 : TIMEOUTS.ui;
      await this.focusWorkbench();
      await this.page.keyboard.press('F1');
      // Ready once it is open with its ">" and lists commands: text typed earlier may be replaced.
      if (!(await this.waitQuickInput([{ kind: 'open', palette: true, minRows: 1 }], patience))) {
        why = `the palette did not open (${await this.describeQuickInput()})`;
        continue;
      }
      try {
        await input.fill(query, { timeout: patience });
      } catch (e) {
        // Something took focus from the palette as it opened (it closes then): open it again.
        why = `the palette closed before the command was typed (${(e as Error).message.split('\n')[0]})`;
        continue;
      }
      // The palette lists the commands known when it opens: just after a reload, the commands of
      // view containers may come a moment later, so a palette that lacks the row is opened again.
      if (
        !(await this.waitQuickInput([{ kind: 'open', palette: true, value: query, row: pagePattern(want) }], patience))
      ) {
        why = `no palette row ${want} (${await this.describeQuickInput()})`;
        continue;
      }
      const mark = (await this.quickInputState()).seq;
      try {
        await this.quickInputRow(want).click({ timeout: patience });
        await this.movePointerAway();
      } catch (e) {
        why = `its row could not be clicked (${(e as Error).message.split('\n')[0]})`;
        continue;
      }
      if (!(await this.waitQuickInput([{ kind: 'left', value: query }], patience))) {
        why = 'it still shows the command after its row was clicked';
        continue;
      }
      return mark;
    }
    throw new Error(`the palette did not run ${want}: ${why}`);
  }

  /** Rows now shown by the quick input (their labels; a row's detail line is not its label). */
  async quickPickLabels(): Promise<string[]> {
    const rows = this.page.locator(VSCode.sel.quickInputRow);
    return rows.evaluateAll((els) => els.map((el) => (el.querySelector('.label-name')?.textContent ?? '').trim()));
  }

  /**
   * Waits for a QuickPick (not the palette) listing a row with this label, running the palette
   * command run just before again as `quickPick` does; picks nothing. Returns its row labels.
   */
  async expectQuickPick(label: string | RegExp): Promise<string[]> {
    return this.step(`QuickPick with ${label}`, async () => {
      const want = textMatcher(label);
      await this.awaitQuickInput(
        { kind: 'open', palette: false, row: pagePattern(want) },
        `QuickPick with a row ${want}`,
        { n: 0 },
      );
      return (await this.quickInputState()).labels;
    });
  }

  /**
   * Picks an item of a QuickPick by its label, typing `filter` first when given. Waits for a
   * QuickPick (not the palette) listing the row; when the palette command run just before does
   * not bring it, or it closes before the row is clicked (focus left it), runs that command again.
   * Returns once the QuickPick has closed (or another quick input took its place).
   */
  async quickPick(label: string | RegExp, opts: { filter?: string } = {}): Promise<void> {
    await this.step(`quick pick ${label}`, async () => {
      const want = textMatcher(label);
      const row = pagePattern(want);
      const reruns = { n: 0 };
      for (;;) {
        if (opts.filter === undefined) {
          await this.awaitQuickInput({ kind: 'open', palette: false, row }, `QuickPick with a row ${want}`, reruns);
        } else {
          await this.awaitQuickInput({ kind: 'open', palette: false }, 'QuickPick', reruns);
          await this.page.locator(VSCode.sel.quickInputBox).fill(opts.filter);
          if (!(await this.waitQuickInput([{ kind: 'open', palette: false, value: opts.filter, row }], TIMEOUTS.ui))) {
            throw new Error(
              `no QuickPick row ${want} after typing ${JSON.stringify(opts.filter)} (${await this.describeQuickInput()})`,
            );
          }
        }
        const before = await this.quickInputState();
        try {
          await this.quickInputRow(want).click({ timeout: 5_000 });
          await this.movePointerAway();
        } catch (e) {
          // Closed under the pointer: wait for it again (its command runs again).
          if ((await this.quickInputState()).open) throw e;
          continue;
        }
        if (
          !(await this.waitQuickInput(
            [{ kind: 'moved', since: before.seq, fingerprint: fingerprintOf(before) }],
            TIMEOUTS.ui,
          ))
        ) {
          throw new Error(`the QuickPick stayed open after ${want} was clicked (${await this.describeQuickInput()})`);
        }
        this.lastCommand = undefined;
        return;
      }
    });
  }

  /**
   * Types into an InputBox (or QuickPick filter) and presses Enter. Waits for an open quick input
   * other than the palette, saying `expectPrompt` when given (a case-insensitive substring of its
   * message); runs the palette command run just before again when it does not come or closes
   * unanswered. Returns once it has closed, or the next one has taken its place.
   */
  async inputBox(text: string, opts: { expectPrompt?: string | RegExp } = {}): Promise<void> {
    await this.step(`input box "${text}"`, async () => {
      const { expectPrompt } = opts;
      const message = expectPrompt === undefined ? undefined : containsPattern(expectPrompt);
      await this.awaitQuickInput(
        { kind: 'open', palette: false, ...(message ? { message } : {}) },
        `input box${expectPrompt ? ` asking ${expectPrompt}` : ''}`,
        { n: 0 },
      );
      const input = this.page.locator(VSCode.sel.quickInputBox);
      await input.fill(text);
      const before = await this.quickInputState();
      await input.press('Enter');
      if (
        !(await this.waitQuickInput(
          [{ kind: 'moved', since: before.seq, fingerprint: fingerprintOf(before) }],
          TIMEOUTS.ui,
        ))
      ) {
        throw new Error(
          `the input box did not close after Enter within ${TIMEOUTS.ui} ms (${await this.describeQuickInput()})`,
        );
      }
      this.lastCommand = undefined;
    });
  }

  /** What the quick input widget shows now. */
  async quickInputState(): Promise<QuickInputState> {
    const s = await this.page.evaluate(`(${QUICK_INPUT_TRACKER}, window.__ccQuickInput.read())`).catch(() => undefined);
    return (
      (s as QuickInputState | undefined) ?? {
        open: false,
        palette: false,
        value: '',
        title: '',
        placeholder: '',
        message: '',
        labels: [],
        seq: 0,
      }
    );
  }

  /**
   * Moves the pointer to the window's top-left corner (the title bar, where nothing reacts to it):
   * left over a clicked row, it would highlight the row of the next quick input under it, which
   * reads as a preselection in screenshots.
   */
  private async movePointerAway(): Promise<void> {
    await this.page.mouse.move(0, 0);
  }

  /** The quick input's row whose label matches. */
  private quickInputRow(want: RegExp): Locator {
    return this.page
      .locator(VSCode.sel.quickInputRow)
      .filter({ has: this.page.locator('.label-name', { hasText: want }) })
      .first();
  }

  /**
   * Waits until one of `conds` holds in the page (checked every 100 ms); returns 1 + its index,
   * or 0 once `timeout` passed. A reload meanwhile waits on in the new document.
   */
  private async waitQuickInput(conds: QuickInputCondition[], timeout: number): Promise<number> {
    const deadline = Date.now() + timeout;
    const expr = `(${QUICK_INPUT_TRACKER}, window.__ccQuickInput.test(${JSON.stringify(conds)}))`;
    for (;;) {
      const left = deadline - Date.now();
      if (left <= 0) return 0;
      try {
        const got = await this.page.waitForFunction(expr, undefined, { timeout: left, polling: 100 });
        return (await got.jsonValue()) as number;
      } catch (e) {
        if ((e as Error).name === 'TimeoutError') return 0;
        if (!/context was destroyed|navigat/i.test((e as Error).message)) throw e;
      }
    }
  }

  /**
   * Waits for the quick input `cond` describes. When the last palette command's quick input
   * closed unanswered, or none at all appeared within REOPEN_AFTER_MS, runs that command again
   * (at most MAX_RERUNS times in all, counted in `reruns`). A quick input that is open but lacks
   * what is waited for is waited on until TIMEOUTS.ui, then that fails, naming what it shows.
   */
  private async awaitQuickInput(cond: QuickInputCondition, what: string, reruns: { n: number }): Promise<void> {
    let deadline = Date.now() + TIMEOUTS.ui;
    for (;;) {
      const cmd = reruns.n < MAX_RERUNS ? this.lastCommand : undefined;
      const conds: QuickInputCondition[] = cmd ? [cond, { kind: 'dismissed', since: cmd.mark }] : [cond];
      const left = deadline - Date.now();
      const got = await this.waitQuickInput(conds, cmd ? Math.min(left, REOPEN_AFTER_MS) : left);
      if (got === 1) return;
      const now = await this.quickInputState();
      if (cmd && (got === 2 || !now.open)) {
        reruns.n += 1;
        this.log(
          `  ${this.label ? `${this.label}: ` : ''}${what}: ${got === 2 ? 'its quick input closed unanswered' : `no quick input within ${REOPEN_AFTER_MS} ms`}; running ${cmd.title} again`,
        );
        this.lastCommand = { title: cmd.title, mark: await this.paletteRun(cmd.title) };
        deadline = Date.now() + TIMEOUTS.ui;
        continue;
      }
      if (Date.now() >= deadline) {
        throw new Error(
          `no ${what} within ${TIMEOUTS.ui} ms (${await this.describeQuickInput()}; ${await this.describeToasts()})`,
        );
      }
    }
  }

  /** The quick input now, in words (for failures). */
  private async describeQuickInput(): Promise<string> {
    const s = await this.quickInputState();
    if (!s.open) return 'no quick input open';
    const said = [
      ['value', s.value],
      ['title', s.title],
      ['placeholder', s.placeholder],
      ['message', s.message],
    ]
      .filter(([, v]) => v)
      .map(([k, v]) => `${k} ${JSON.stringify(v)}`);
    return `${s.palette ? 'the palette' : 'a quick input'} open (${[...said, `rows ${s.labels.length ? s.labels.map((l) => JSON.stringify(l)).join(', ') : 'none'}`].join(', ')})`;
  }

  // ---------------------------------------------------------------- notifications and dialogs

  /** The notification toast whose message matches (substring for a string). */
  notification(text: string | RegExp): Locator {
    return this.page.locator(VSCode.sel.notificationToast).filter({
      has: this.page.locator(VSCode.sel.notificationMessage, { hasText: text }),
    });
  }

  /**
   * Waits for a notification with this message and returns its toast. A toast moves to the
   * notification centre by itself (an information one after about ten seconds, buttons or not),
   * and no more than three show at once: one that is not (or no longer) a toast is looked for in
   * the centre (shown and hidden again; the locator returned is then the centre's item).
   */
  async expectNotification(text: string | RegExp, timeout = TIMEOUTS.ui): Promise<Locator> {
    const toast = this.notification(text).first();
    try {
      await toast.waitFor({ state: 'visible', timeout });
    } catch {
      const toasts = await this.describeToasts();
      const inCentre = await this.inNotificationCentre(text, async () => undefined).catch((e: Error) => ({
        found: undefined,
        messages: [`(${e.message.split('\n')[0]})`],
      }));
      if (inCentre.found) {
        this.log(
          `  ${this.label ? `${this.label}: ` : ''}notification ${text}: found in the notification centre, not as a toast`,
        );
        return inCentre.found;
      }
      throw await this.failure(
        `no notification ${text} within ${timeout} ms (${toasts}; notification centre: ${inCentre.messages.length ? inCentre.messages.map((s) => JSON.stringify(s)).join(', ') : 'empty'})`,
        'notification',
      );
    }
    // Toasts fade in; a screenshot taken meanwhile shows them half transparent.
    await toast
      .and(this.page.locator('.notification-fade-in-done'))
      .waitFor({ timeout: 2_000 })
      .catch(() => {});
    return toast;
  }

  /** Clicks a button (action) of the notification with this message (in its toast, or in the centre when it went there). */
  async clickNotificationButton(text: string | RegExp, button: string | RegExp, timeout = TIMEOUTS.ui): Promise<void> {
    this.lastCommand = undefined;
    await this.expectNotification(text, timeout);
    await this.step(`notification button ${button}`, async () => {
      const buttonOf = (item: Locator) =>
        item.locator(VSCode.sel.notificationButton, { hasText: textMatcher(button) }).first();
      const toast = this.notification(text).first();
      let missed: unknown = new Error(`no notification ${text} with a button ${button}`);
      if (await toast.isVisible()) {
        try {
          await buttonOf(toast).click({ timeout: 5_000 });
          return;
        } catch (e) {
          missed = e; // the toast left for the centre meanwhile
        }
      }
      const inCentre = await this.inNotificationCentre(text, (item) => buttonOf(item).click());
      if (!inCentre.found) throw missed;
    });
  }

  /**
   * Shows the notification centre, runs `fn` on the item with this message when it is there, and
   * hides the centre again; returns that item (undefined when absent) and the centre's messages.
   */
  private async inNotificationCentre(
    text: string | RegExp,
    fn: (item: Locator) => Promise<unknown>,
  ): Promise<{ found: Locator | undefined; messages: string[] }> {
    const centre = this.page.locator(VSCode.sel.notificationCentre);
    await this.runOwnCommand('Notifications: Show Notifications');
    try {
      await centre.waitFor({ state: 'visible', timeout: 5_000 });
      const messages = (await centre.locator(VSCode.sel.notificationMessage).allInnerTexts()).map((s) => s.trim());
      const item = centre
        .locator(VSCode.sel.notificationItem)
        .filter({ has: this.page.locator(VSCode.sel.notificationMessage, { hasText: text }) })
        .first();
      if (!(await item.isVisible())) return { found: undefined, messages };
      await fn(item);
      return { found: item, messages };
    } finally {
      if (await centre.isVisible()) await this.runOwnCommand('Notifications: Hide Notifications').catch(() => {});
    }
  }

  /** The toasts now shown, in words (for failures). */
  private async describeToasts(): Promise<string> {
    const shown = await this.page
      .locator(`${VSCode.sel.notificationToast} ${VSCode.sel.notificationMessage}`)
      .allInnerTexts()
      .catch(() => []);
    return `toasts: ${shown.length ? shown.map((s) => JSON.stringify(s.trim())).join(', ') : 'none'}`;
  }

  /**
   * Closes every notification (toasts and the centre) and checks that no toast is left: with the
   * focus in a webview the command can be lost, so the workbench takes the focus first, and a
   * toast still shown afterwards makes it run once more.
   */
  async clearNotifications(): Promise<void> {
    const toast = this.page.locator(VSCode.sel.notificationToast).first();
    for (let attempt = 1; ; attempt += 1) {
      await this.focusWorkbench();
      await this.runOwnCommand('Notifications: Clear All Notifications');
      try {
        await toast.waitFor({ state: 'hidden', timeout: 3_000 });
        return;
      } catch {
        if (attempt === 2)
          throw await this.failure(
            `notifications still shown after Clear All Notifications (${await this.describeToasts()})`,
            'clear-notifications',
          );
        this.log(
          `  ${this.label ? `${this.label}: ` : ''}notifications still shown after Clear All Notifications (${await this.describeToasts()}); clearing again`,
        );
      }
    }
  }

  /** Waits for a modal dialog (showWarningMessage({modal:true}) etc.) and returns its message. */
  async expectDialog(text?: string | RegExp): Promise<string> {
    return this.step('modal dialog', async () => {
      const msg = this.page.locator(VSCode.sel.dialogMessage);
      await msg.waitFor({ state: 'visible' });
      const shown = (await msg.innerText()).trim();
      if (text !== undefined && !(typeof text === 'string' ? shown.includes(text) : text.test(shown))) {
        throw new Error(`dialog says ${JSON.stringify(shown)}, expected ${text}`);
      }
      return shown;
    });
  }

  /** Clicks a button of the open modal dialog by its label. */
  async dialogButton(label: string | RegExp): Promise<void> {
    this.lastCommand = undefined;
    await this.step(`dialog button ${label}`, async () => {
      await this.page
        .locator(VSCode.sel.dialogButton, { hasText: textMatcher(label) })
        .first()
        .click();
      await this.page.locator(VSCode.sel.dialog).waitFor({ state: 'hidden' });
    });
  }

  // ---------------------------------------------------------------- views and trees

  /** Opens a view container by its activity-bar title (e.g. "Change Control"). */
  async openActivity(title: string): Promise<void> {
    await this.step(`open activity ${title}`, async () => {
      // The label is the container title, maybe followed by " (keybinding)" or " - badge".
      const q = JSON.stringify(title);
      const q2 = JSON.stringify(`${title} `);
      const item = this.page
        .locator(`${VSCode.sel.activityBarItem}[aria-label=${q}], ${VSCode.sel.activityBarItem}[aria-label^=${q2}]`)
        .first();
      const sidebar = this.page.locator('.part.sidebar');
      // After a reload the extensions' containers come with the extension scan, which a busy
      // machine makes slow: wait as long as for the workbench.
      await item.waitFor({ state: 'visible', timeout: TIMEOUTS.workbench });
      const deadline = Date.now() + TIMEOUTS.ui * 2;
      for (let attempt = 0; ; attempt++) {
        const checked = await item.evaluate((el) => el.closest('.action-item')?.classList.contains('checked') ?? false);
        // After a reload the side bar may come back hidden with its container still the checked
        // one, or the layout's restore may hide it again just after a click: look again each time.
        if (checked && (await sidebar.isVisible())) return;
        if (Date.now() > deadline)
          throw new Error(`the ${title} container is not shown (checked: ${checked}) after ${attempt} attempts`);
        // A hover left over the activity bar can take the click: move the pointer off first, and
        // fall back to the container's own palette command.
        await this.movePointerAway();
        try {
          if (attempt % 2 === 1) throw new Error('the click did not open it');
          await item.click({ timeout: 5_000 });
        } catch (e) {
          this.log(`  activity ${title}: ${(e as Error).message.split('\n')[0]}; View: Show ${title}`);
          await this.runOwnCommand(`View: Show ${title}`);
        }
        await sidebar.waitFor({ state: 'visible', timeout: 5_000 }).catch(() => undefined);
      }
    });
  }

  /** The view pane with this title (its header text), e.g. "Change Requests". */
  view(title: string): Locator {
    return this.page
      .locator('.pane')
      .filter({
        has: this.page.locator(`${VSCode.sel.paneHeader} h3.title`, { hasText: textMatcher(title) }),
      })
      .first();
  }

  /** A tree item by its label (exact for a string), optionally inside one view. */
  treeItem(label: string | RegExp, opts: { view?: string } = {}): Locator {
    const scope = opts.view
      ? this.view(opts.view)
      : this.page.locator('.part.sidebar, .part.panel, .part.auxiliarybar');
    return scope
      .locator(VSCode.sel.treeRow)
      .filter({
        has: this.page.locator('.label-name, .monaco-highlighted-label', { hasText: textMatcher(label) }),
      })
      .first();
  }

  /** Clicks a tree item (expanding the view's pane first if it is collapsed). */
  async clickTreeItem(label: string | RegExp, opts: { view?: string; double?: boolean } = {}): Promise<void> {
    this.lastCommand = undefined;
    await this.step(`click tree item ${label}`, async () => {
      if (opts.view) await this.expandView(opts.view);
      const item = this.treeItem(label, opts);
      await item.waitFor({ state: 'visible' });
      if (opts.double) await item.dblclick();
      else await item.click();
    });
  }

  /** Labels of the visible rows of a view's tree. */
  async treeLabels(viewTitle: string): Promise<string[]> {
    const rows = this.view(viewTitle).locator(`${VSCode.sel.treeRow} .label-name`);
    return (await rows.allInnerTexts()).map((s) => s.trim());
  }

  /**
   * The rendered rows of a view's tree in order, with their nesting level (1 = root), the
   * description shown after the label, and whether the row is expanded (null: no children).
   * Only rows scrolled into view are rendered.
   */
  async treeRows(viewTitle: string): Promise<TreeRow[]> {
    const rows = this.view(viewTitle).locator(VSCode.sel.treeRow);
    return rows.evaluateAll((els) =>
      els
        .map((el) => ({
          top: Number.parseFloat((el as HTMLElement).style.top || '0'),
          label: (el.querySelector('.label-name')?.textContent ?? '').trim(),
          description: (el.querySelector('.label-description')?.textContent ?? '').trim(),
          level: Number(el.getAttribute('aria-level') ?? '1'),
          expanded: el.hasAttribute('aria-expanded') ? el.getAttribute('aria-expanded') === 'true' : null,
        }))
        // The list recycles row elements: their DOM order need not be the visual order.
        .sort((a, b) => a.top - b.top)
        .map(({ top: _top, ...row }) => row),
    );
  }

  /**
   * The children of a root row of a view's tree (a group), as rendered: the rows after it up to
   * the next root row. Waits until `until` holds for them (default: returns at once).
   */
  async treeChildren(
    viewTitle: string,
    parent: string,
    until?: (children: TreeRow[]) => boolean,
    timeout = TIMEOUTS.ui,
  ): Promise<TreeRow[]> {
    const deadline = Date.now() + timeout;
    let last: TreeRow[];
    for (;;) {
      const rows = await this.treeRows(viewTitle);
      const start = rows.findIndex((r) => r.level === 1 && r.label === parent);
      last = [];
      if (start >= 0)
        for (const r of rows.slice(start + 1)) {
          if (r.level === 1) break;
          last.push(r);
        }
      if (!until || (start >= 0 && until(last))) return last;
      if (Date.now() > deadline) {
        throw await this.failure(
          `tree ${viewTitle} > ${parent}: children ${JSON.stringify(last)} (rows: ${JSON.stringify(rows.map((r) => `${'  '.repeat(r.level - 1)}${r.label} [${r.description}]`))})`,
          'tree',
        );
      }
      await sleep(200);
    }
  }

  /** Makes sure a view's pane is expanded. */
  async expandView(title: string): Promise<void> {
    const pane = this.view(title);
    await pane.waitFor({ state: 'attached' });
    const header = pane.locator(VSCode.sel.paneHeader);
    // A container with a single view hides the view's own header (the container title shows).
    if (!(await header.isVisible())) return;
    if ((await header.getAttribute('aria-expanded')) === 'false') await header.click();
  }

  // ---------------------------------------------------------------- settings

  /**
   * Changes user settings while VS Code runs, the way a user does: in the settings.json editor,
   * saved with Ctrl+S (code-server does not pick up a settings file written behind its back).
   * Waits until the file holds the new values.
   */
  async updateUserSettings(changes: Record<string, unknown>): Promise<void> {
    await this.updateSettingsFile('User', 'Preferences: Open User Settings (JSON)', changes);
  }

  /**
   * Changes the machine's settings (code-server's remote settings, `<user-data>/Machine/`) the
   * same way: where machine-scoped settings such as `changeControl.serverUrl` are read from.
   */
  async updateMachineSettings(changes: Record<string, unknown>): Promise<void> {
    await this.updateSettingsFile('Machine', /Preferences: Open Remote Settings \(JSON\)/, changes);
  }

  private async updateSettingsFile(
    folder: 'User' | 'Machine',
    command: string | RegExp,
    changes: Record<string, unknown>,
  ): Promise<void> {
    const file = path.join(this.userDataDir, folder, 'settings.json');
    const current = fs.existsSync(file) ? (JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>) : {};
    const wanted = { ...current, ...changes };
    const text = JSON.stringify(wanted, null, 2);
    await this.step(`update ${folder.toLowerCase()} settings`, async () => {
      await this.runOwnCommand(command);
      const editor = this.page.locator('.editor-instance .monaco-editor').first();
      await editor.waitFor();
      await editor.click();
      await this.page.keyboard.press('ControlOrMeta+A');
      await this.page.keyboard.press('Delete');
      await this.page.keyboard.insertText(text);
      await this.page.keyboard.press('ControlOrMeta+S');
      const deadline = Date.now() + TIMEOUTS.ui;
      const saved = () => {
        try {
          return JSON.stringify(JSON.parse(fs.readFileSync(file, 'utf8'))) === JSON.stringify(wanted);
        } catch {
          return false;
        }
      };
      while (!saved()) {
        if (Date.now() > deadline)
          throw new Error(`settings.json does not hold the new settings after ${TIMEOUTS.ui} ms`);
        await sleep(200);
      }
      // VS Code itself may write user settings shortly after start; a write that met the editor
      // with unsaved changes is refused with a toast offering "Save and Retry". Let it finish.
      const refused = this.notification('Unable to write into user settings because the file has unsaved changes');
      for (let i = 0; i < 5 && (await refused.count()) > 0; i++) {
        const toast = refused.first();
        await toast
          .locator(VSCode.sel.notificationButton, { hasText: textMatcher('Save and Retry') })
          .first()
          .click();
        await toast.waitFor({ state: 'detached', timeout: 5_000 }).catch(() => {});
      }
      await this.closeAllEditors();
    });
  }

  // ---------------------------------------------------------------- editors and webviews

  /** The editor tab with this title. */
  tab(title: string | RegExp): Locator {
    return this.page
      .locator(VSCode.sel.tab)
      .filter({ has: this.page.locator('.label-name', { hasText: textMatcher(title) }) })
      .first();
  }

  /**
   * What the extension host says an extension's activation took (Developer: Show Running
   * Extensions: loading its code plus calling activate(), as "Activation: 42ms" or "Startup
   * Activation: 42ms"). Closes that editor again.
   */
  async extensionActivationTime(displayName: string): Promise<{ ms: number; text: string }> {
    return this.step(`activation time of ${displayName}`, async () => {
      await this.runOwnCommand('Developer: Show Running Extensions');
      const row = this.page
        .locator('.runtime-extensions-editor .extension')
        .filter({ has: this.page.locator('.name', { hasText: textMatcher(displayName) }) })
        .first();
      const text = (await expectText(row.locator('.activation-time'), /\d+ms/)).trim();
      await this.closeAllEditors();
      return { ms: Number(/(\d+)ms/.exec(text)![1]), text };
    });
  }

  /** Closes all editors (webview panels included). */
  async closeAllEditors(): Promise<void> {
    await this.runOwnCommand('View: Close All Editors');
  }

  /**
   * The content of a visible webview. VS Code shows a webview as an outer `iframe.webview`
   * (its host page) holding `iframe#active-frame` with the extension's HTML. Hidden webviews stay
   * in the DOM, so the one wanted is picked by a selector that must exist in its content
   * (`has`), among the visible ones; without `has`, the only visible webview.
   */
  async webview(opts: { has?: string; timeout?: number } = {}): Promise<FrameLocator> {
    const timeout = opts.timeout ?? TIMEOUTS.ui;
    return this.step(`find webview${opts.has ? ` with ${opts.has}` : ''}`, async () => {
      const deadline = Date.now() + timeout;
      let seen = 0;
      while (Date.now() < deadline) {
        const outers = this.page.locator(VSCode.sel.webviewOuter);
        const n = await outers.count();
        const visible: number[] = [];
        for (let i = 0; i < n; i++) if (await outers.nth(i).isVisible()) visible.push(i);
        seen = visible.length;
        for (const i of visible) {
          const name = await outers.nth(i).getAttribute('name');
          const outerSel = name
            ? `${VSCode.sel.webviewOuter}[name="${name}"]`
            : `${VSCode.sel.webviewOuter} >> nth=${i}`;
          const inner = this.page.frameLocator(outerSel).frameLocator(VSCode.sel.webviewInner);
          const probe = inner.locator(opts.has ?? 'body');
          if ((await probe.count().catch(() => 0)) > 0) {
            if (!opts.has && visible.length > 1)
              throw new Error(`${visible.length} webviews visible: pass { has: selector }`);
            return inner;
          }
        }
        await sleep(250);
      }
      throw new Error(
        `no visible webview${opts.has ? ` containing ${opts.has}` : ''} within ${timeout} ms (${seen} visible)`,
      );
    });
  }

  /**
   * Reloads the window the way a user does (Developer: Reload Window) and waits for the
   * workbench to come back. Editors, webview panels with a serializer among them, are restored.
   */
  async reloadWindow(): Promise<void> {
    await this.step('reload window', async () => {
      const loaded = this.page.waitForEvent('load', { timeout: TIMEOUTS.workbench });
      await this.runOwnCommand('Developer: Reload Window');
      await loaded;
      await this.page.locator(VSCode.sel.workbench).waitFor({ state: 'visible', timeout: TIMEOUTS.workbench });
      await this.page.locator('.part.statusbar').waitFor({ state: 'visible', timeout: TIMEOUTS.workbench });
      await this.page.locator('.part.activitybar').waitFor({ state: 'visible', timeout: TIMEOUTS.workbench });
    });
  }

  // ---------------------------------------------------------------- between scenarios and stop

  /** Back to a plain workbench: no pickers, dialogs, notifications, editors or panel. */
  async resetUi(): Promise<void> {
    this.lastCommand = undefined;
    // Out of a webview first: Escape and the palette go to the workbench, not the webview.
    await this.focusWorkbench().catch(() => {});
    for (let i = 0; i < 3; i++) await this.page.keyboard.press('Escape');
    const dialog = this.page.locator(VSCode.sel.dialog);
    if (await dialog.isVisible()) {
      await this.page
        .locator(VSCode.sel.dialogButton)
        .last()
        .click()
        .catch(() => {});
    }
    await this.clearNotifications().catch(() => {});
    await this.closeAllEditors().catch(() => {});
    // A panel a scenario opened (e.g. an output channel) would halve the editor area of the next.
    if (await this.page.locator('.part.panel').isVisible())
      await this.runOwnCommand('View: Hide Panel').catch(() => {});
  }

  /** Closes the browser and stops code-server with every helper process it started. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    try {
      await this.context.close();
    } catch {
      /* ignore */
    }
    try {
      await this.browser.close();
    } catch {
      /* ignore */
    }
    if (this.proc.pid) await killTree(this.proc.pid);
    for (const st of this.logStreams) st.end();
    const left = this.proc.pid ? [this.proc.pid, ...descendants(this.proc.pid)].filter(alive) : [];
    if (left.length) this.log(`WARNING: processes still alive after stop: ${left.join(' ')}`);
    if (!this.keepTemp) fs.rmSync(this.tempRoot, { recursive: true, force: true });
    else this.log(`kept ${this.tempRoot}`);
  }

  /** Synchronous last-resort kill (process exit handler). */
  private killNow(): void {
    if (this.stopped || !this.proc.pid) return;
    for (const p of [...descendants(this.proc.pid), this.proc.pid]) {
      try {
        process.kill(p, 'SIGKILL');
      } catch {
        /* gone */
      }
    }
    try {
      process.kill(-this.proc.pid, 'SIGKILL');
    } catch {
      /* gone */
    }
  }
}
