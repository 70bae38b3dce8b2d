// The connection to the service: which service (setting `changeControl.serverUrl`, or the bundled
// one started on demand), which token (SecretStorage only), and who the user is. Sign In and Sign
// Out live here too. Its phase drives the welcome views through a context key.
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import * as vscode from 'vscode';
import type { ApiClient } from '../core/api-client';
import { asApiError, presentError } from '../core/api-error';
import { chooseServiceRuntime, launchService, runtimeWords, type RunningService } from '../core/bundled-service';
import { CONTEXT_KEYS } from '../core/commands';
import { hostOf, type ConnectionState } from '../core/connection-state';
import type { CurrentUser } from '../../contract/api/host';
import {
  BUNDLED_ADMIN_SECRET,
  parseSettingsFrom,
  SETTING_KEYS,
  tokenSecretKey,
  type ConnectionTarget,
  type Settings,
} from '../core/settings';
import { DisposableBase } from './disposable';

// Loaded with the first client: the API client and the schemas it parses answers with (zod) are
// not needed to activate.
const apiClient = () => require('../core/api-client') as typeof import('../core/api-client');

const SIGNED_OUT_OF_BUNDLED = 'changeControl.signedOutOfBundled';
const TOKEN_DESCRIPTION = 'VS Code Change Control';

export class Connection extends DisposableBase {
  private current: ConnectionState = { phase: 'signedOut', serviceUrl: null, bundled: false };
  private authed: ApiClient | null = null;
  private service: { nodePath: string | null; running: Promise<RunningService> } | undefined;
  private generation = 0;
  private attempt: Promise<void> | undefined;
  private readonly changed = this._register(new vscode.EventEmitter<ConnectionState>());
  readonly onDidChange = this.changed.event;

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly log: vscode.LogOutputChannel,
  ) {
    super();
    this._register(
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration(SETTING_KEYS.serverUrl) || e.affectsConfiguration(SETTING_KEYS.nodePath)) {
          this.log.info('connection settings changed');
          void this.connect();
        }
      }),
    );
    void this.setContext();
  }

  get state(): ConnectionState {
    return this.current;
  }

  /** The signed-in client, or null when not connected. */
  get client(): ApiClient | null {
    return this.current.phase === 'connected' ? this.authed : null;
  }

  get user(): CurrentUser | null {
    return this.current.phase === 'connected' ? this.current.user : null;
  }

  settings(): Settings {
    const config = vscode.workspace.getConfiguration();
    return parseSettingsFrom((key) => config.inspect(key));
  }

  private makeClient(url: string, token: string | null): ApiClient {
    const { ApiClient } = apiClient();
    return new ApiClient({ baseUrl: url, token, log: (line) => this.log.debug(line) });
  }

  private set(state: ConnectionState): void {
    this.current = state;
    if (state.phase !== 'connected') this.authed = null;
    this.log.info(
      `connection: ${state.phase}${'serviceUrl' in state && state.serviceUrl ? ` (${state.serviceUrl})` : ''}`,
    );
    void this.setContext();
    this.changed.fire(state);
  }

  private async setContext(): Promise<void> {
    await vscode.commands.executeCommand('setContext', CONTEXT_KEYS.connection, this.current.phase);
  }

  // ------------------------------------------------------------------ connecting

  /** (Re)connects with the settings and the stored token; never throws. */
  connect(): Promise<void> {
    const attempt = this.connectOnce();
    this.attempt = attempt;
    return attempt;
  }

  /**
   * The signed-in client once the connection attempt under way (if any) has ended; null when
   * it did not connect within `timeoutMs`. For what VS Code asks of the extension before it has
   * connected (documents restored with the window).
   */
  async settledClient(timeoutMs = 60_000): Promise<ApiClient | null> {
    const deadline = Date.now() + timeoutMs;
    // An attempt may be overtaken by a newer one (settings read at startup): wait for the last.
    while (!this.client && this.attempt) {
      const attempt = this.attempt;
      const left = deadline - Date.now();
      if (left <= 0) break;
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([attempt, new Promise((r) => (timer = setTimeout(r, left)))]);
      clearTimeout(timer);
      if (this.attempt === attempt) break;
    }
    return this.client;
  }

  private async connectOnce(): Promise<void> {
    const generation = ++this.generation;
    const settings = this.settings();
    for (const p of settings.problems) this.log.warn(p);
    const target = settings.connection;
    if (target.mode === 'invalid') {
      this.set({ phase: 'failed', serviceUrl: null, bundled: false, message: target.error });
      return;
    }
    if (target.mode === 'remote') await this.stopService();
    const url = await this.serviceUrl(target, settings.nodePath, generation);
    if (url === undefined || generation !== this.generation) return;
    const token = await this.storedToken(target);
    if (generation !== this.generation) return;
    if (!token) {
      this.set({ phase: 'signedOut', serviceUrl: url, bundled: target.mode === 'bundled' });
      return;
    }
    this.set({ phase: 'connecting', serviceUrl: url, bundled: target.mode === 'bundled' });
    const client = this.makeClient(url, token);
    try {
      const user = await client.me();
      if (generation !== this.generation) return;
      this.authed = client;
      this.set({ phase: 'connected', serviceUrl: url, bundled: target.mode === 'bundled', user });
    } catch (e) {
      if (generation !== this.generation) return;
      const error = asApiError(e);
      const message =
        error.kind === 'badCredentials'
          ? `The service refused the stored token (${error.message}). Sign in again.`
          : presentError('Connecting', error).message;
      this.set({ phase: 'failed', serviceUrl: url, bundled: target.mode === 'bundled', message });
    }
  }

  /** The URL of the service to use, starting the bundled one when needed; undefined after a failure (already shown). */
  private async serviceUrl(
    target: ConnectionTarget,
    nodePath: string | null,
    generation: number,
  ): Promise<string | undefined> {
    if (target.mode === 'remote') return target.url;
    if (!this.service || this.service.nodePath !== nodePath) {
      await this.stopService();
      this.set({ phase: 'starting' });
    }
    try {
      return (await this.ensureService(nodePath)).url;
    } catch (e) {
      if (generation === this.generation) {
        this.set({ phase: 'failed', serviceUrl: null, bundled: true, message: (e as Error).message });
      }
      return undefined;
    }
  }

  private ensureService(nodePath: string | null): Promise<RunningService> {
    if (this.service && this.service.nodePath === nodePath) return this.service.running;
    const running = this.startService(nodePath);
    const entry = { nodePath, running };
    this.service = entry;
    running.then(
      (svc) => {
        void svc.exited.then(({ code, signal }) => {
          if (this.service !== entry) return; // stopped on purpose
          this.service = undefined;
          this.log.warn(`the bundled service exited (${signal ?? `code ${code}`})`);
          if (this.current.phase !== 'signedOut' || this.settings().connection.mode === 'bundled') {
            this.set({
              phase: 'failed',
              serviceUrl: null,
              bundled: true,
              message: `The bundled service stopped (${signal ?? `exit code ${code}`}). Refresh to start it again.`,
            });
          }
        });
      },
      () => {
        if (this.service === entry) this.service = undefined;
      },
    );
    return running;
  }

  private async startService(nodePath: string | null): Promise<RunningService> {
    const adminToken = await this.bundledAdminToken();
    const dbPath = join(this.context.globalStorageUri.fsPath, 'change-control.sqlite3');
    const serverScript = this.context.asAbsolutePath(join('dist', 'server.js'));
    // The editor's own runtime unless changeControl.nodePath names another (or it lacks node:sqlite).
    const { runtime, note, probe } = await chooseServiceRuntime(nodePath, process.execPath);
    if (note) this.log.warn(note);
    this.log.info(
      `starting the bundled service on ${runtimeWords(runtime)}${probe ? ` (Node.js ${probe.version})` : ''}: ${runtime.program} ${serverScript} --port 0 --db ${dbPath}`,
    );
    const svc = await launchService({
      runtime,
      probe,
      note,
      serverScript,
      dbPath,
      adminToken,
      log: (line) => this.log.info(`[service] ${line}`),
    });
    this.log.info(`the bundled service listens on ${svc.url} (pid ${svc.pid})`);
    return svc;
  }

  private async bundledAdminToken(): Promise<string> {
    const existing = await this.context.secrets.get(BUNDLED_ADMIN_SECRET);
    if (existing) return existing;
    const token = randomBytes(24).toString('hex');
    await this.context.secrets.store(BUNDLED_ADMIN_SECRET, token);
    return token;
  }

  /** Stops the bundled service if it runs (on deactivate, or when a remote service is configured). */
  async stopService(): Promise<void> {
    const entry = this.service;
    this.service = undefined;
    if (!entry) return;
    try {
      const svc = await entry.running;
      this.log.info(`stopping the bundled service (pid ${svc.pid})`);
      await svc.stop();
    } catch {
      /* it never started */
    }
  }

  private async storedToken(target: ConnectionTarget): Promise<string | null> {
    const key = tokenSecretKey(target);
    if (!key) return null;
    const stored = await this.context.secrets.get(key);
    if (stored) return stored;
    if (target.mode === 'bundled' && !this.context.globalState.get<boolean>(SIGNED_OUT_OF_BUNDLED))
      return this.bundledAdminToken();
    return null;
  }

  // ------------------------------------------------------------------ sign in and out

  /** Asks for a token or a username and password, checks it, keeps it; returns whether it worked. */
  async signIn(): Promise<boolean> {
    const settings = this.settings();
    const target = settings.connection;
    if (target.mode === 'invalid') {
      const choice = await vscode.window.showErrorMessage(target.error, 'Open Settings');
      if (choice) void vscode.commands.executeCommand('workbench.action.openSettings', SETTING_KEYS.serverUrl);
      return false;
    }
    const url = await this.serviceUrl(target, settings.nodePath, this.generation);
    if (!url) {
      const state = this.current;
      void vscode.window
        .showErrorMessage(state.phase === 'failed' ? state.message : 'The service could not be started.', 'Show Logs')
        .then((c) => c && this.log.show(true));
      return false;
    }
    type Way = 'token' | 'password' | 'admin';
    const ways: (vscode.QuickPickItem & { way: Way })[] = [
      { label: '$(key) Sign in with a token', detail: 'Paste an API token of the service.', way: 'token' },
      {
        label: '$(person) Sign in with username and password',
        detail: 'A new token is made for you (tokens/provision).',
        way: 'password',
      },
    ];
    if (target.mode === 'bundled')
      ways.push({
        label: '$(server) Use the bundled service as administrator',
        detail: 'The token the extension started the bundled service with.',
        way: 'admin',
      });
    const way = await vscode.window.showQuickPick(ways, {
      title: `Sign in to ${target.mode === 'bundled' ? 'the bundled service' : hostOf(url)}`,
      placeHolder: 'How do you want to sign in?',
      ignoreFocusOut: true,
    });
    if (!way) return false;

    let token: string | undefined;
    const anonymous = this.makeClient(url, null);
    if (way.way === 'token') {
      token = (
        await vscode.window.showInputBox({
          title: 'Change Control: Sign In',
          prompt: 'API token',
          password: true,
          ignoreFocusOut: true,
          validateInput: (v) => (v.trim() ? undefined : 'Paste a token'),
        })
      )?.trim();
    } else if (way.way === 'password') {
      const username = (
        await vscode.window.showInputBox({
          title: 'Change Control: Sign In',
          prompt: 'Username',
          ignoreFocusOut: true,
          validateInput: (v) => (v.trim() ? undefined : 'Enter your username'),
        })
      )?.trim();
      if (!username) return false;
      const password = await vscode.window.showInputBox({
        title: 'Change Control: Sign In',
        prompt: `Password of ${username}`,
        password: true,
        ignoreFocusOut: true,
      });
      if (!password) return false;
      try {
        token = await anonymous.provisionToken(username, password, TOKEN_DESCRIPTION);
      } catch (e) {
        this.reportSignInFailure(e);
        return false;
      }
    } else {
      token = await this.bundledAdminToken();
    }
    if (!token) return false;

    let user: CurrentUser;
    try {
      user = await anonymous.withToken(token).me();
    } catch (e) {
      this.reportSignInFailure(e);
      return false;
    }
    const key = tokenSecretKey(target)!;
    if (way.way === 'admin') await this.context.secrets.delete(key);
    else await this.context.secrets.store(key, token);
    if (target.mode === 'bundled') await this.context.globalState.update(SIGNED_OUT_OF_BUNDLED, false);
    await this.connect();
    if (this.current.phase === 'connected') {
      void vscode.window.showInformationMessage(
        `Signed in to ${target.mode === 'bundled' ? 'the bundled Change Control service' : hostOf(url)} as ${user.username}.`,
      );
      return true;
    }
    return false;
  }

  private reportSignInFailure(e: unknown): void {
    const error = asApiError(e);
    this.log.error(`sign in: [${error.kind}] ${error.message}`);
    const message =
      error.kind === 'badCredentials' ? `Sign in failed: ${error.message}` : presentError('Signing in', error).message;
    void vscode.window.showErrorMessage(message, 'Sign In', 'Show Logs').then((choice) => {
      if (choice === 'Sign In') void vscode.commands.executeCommand('changeControl.signIn');
      else if (choice === 'Show Logs') this.log.show(true);
    });
  }

  async signOut(): Promise<void> {
    const target = this.settings().connection;
    const key = tokenSecretKey(target);
    if (key) await this.context.secrets.delete(key);
    if (target.mode === 'bundled') await this.context.globalState.update(SIGNED_OUT_OF_BUNDLED, true);
    this.generation += 1;
    const url = this.current.phase === 'starting' ? null : this.current.serviceUrl;
    this.set({ phase: 'signedOut', serviceUrl: url, bundled: target.mode === 'bundled' });
    void vscode.window.showInformationMessage('Signed out of Change Control.');
  }

  override dispose(): void {
    void this.stopService();
    super.dispose();
  }
}
