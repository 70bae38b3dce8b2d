// The connection to the service: which service (setting `changeControl.serverUrl`, or the bundled
// one started on demand), which token (SecretStorage only), and who the user is. Sign In and Sign
// Out live here too. What it decides (retrying, watching the service) is core/connection-machine.ts;
// its phase and problem drive the welcome views through context keys.
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import * as vscode from 'vscode';
import type { ApiClient } from '../core/api-client';
import { asApiError, presentError } from '../core/api-error';
import { chooseServiceRuntime, launchService, runtimeWords, type RunningService } from '../core/bundled-service';
import { CONTEXT_KEYS } from '../core/commands';
import { ConnectionMachine, problemOfError, type AttemptOutcome, type ProbeResult } from '../core/connection-machine';
import { hostOf, problemOf, type ConnectionState } from '../core/connection-state';
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
  private authed: ApiClient | null = null;
  /** The client each connected attempt signed in with, by the user it found (its state carries that user). */
  private readonly clients = new WeakMap<CurrentUser, ApiClient>();
  private service: { nodePath: string | null; running: Promise<RunningService> } | undefined;
  private readonly machine: ConnectionMachine;
  /** The last reason the bundled service did not start that was said in a notification. */
  private toldWhy: string | undefined;
  private readonly changed = this._register(new vscode.EventEmitter<ConnectionState>());
  readonly onDidChange = this.changed.event;

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly log: vscode.LogOutputChannel,
  ) {
    super();
    this.machine = new ConnectionMachine({
      attempt: (progress) => this.attemptOnce(progress),
      probe: (url) => this.probe(url),
      onState: (state) => this.onState(state),
      // Each retry is a debug line: the state's changes are the info lines ("connection: offline …").
      log: (line) => this.log.debug(`connection: ${line}`),
    });
    this._register({ dispose: () => this.machine.dispose() });
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
    return this.machine.state;
  }

  /** The signed-in client, or null when not connected. */
  get client(): ApiClient | null {
    return this.state.phase === 'connected' ? this.authed : null;
  }

  get user(): CurrentUser | null {
    const state = this.state;
    return state.phase === 'connected' ? state.user : null;
  }

  settings(): Settings {
    const config = vscode.workspace.getConfiguration();
    return parseSettingsFrom((key) => config.inspect(key));
  }

  private makeClient(url: string, token: string | null, timeoutMs?: number): ApiClient {
    const { ApiClient } = apiClient();
    return new ApiClient({
      baseUrl: url,
      token,
      timeoutMs,
      log: (line) => this.log.debug(line),
      // A call that finds the service gone has the connection ask it at once.
      onFailure: (error) => this.machine.callFailed(error),
    });
  }

  private onState(state: ConnectionState): void {
    this.authed = state.phase === 'connected' ? (this.clients.get(state.user) ?? null) : null;
    const where = 'serviceUrl' in state && state.serviceUrl ? ` (${state.serviceUrl})` : '';
    const why = state.phase === 'offline' || state.phase === 'failed' ? `: ${state.message}` : '';
    this.log.info(`connection: ${state.phase}${where}${why}`);
    void this.setContext();
    this.changed.fire(state);
    this.tellWhyNotStarted(state);
  }

  /** The bundled service not starting is said once per reason, with the ways forward (the views say it too). */
  private tellWhyNotStarted(state: ConnectionState): void {
    if (state.phase !== 'offline' || state.problem !== 'serviceFailed') {
      if (state.phase === 'connected') this.toldWhy = undefined;
      return;
    }
    if (this.toldWhy === state.message) return;
    this.toldWhy = state.message;
    void vscode.window
      .showErrorMessage(state.message, 'Show Logs', 'Open Settings', 'Use a Remote Server')
      .then((choice) => {
        if (choice === 'Show Logs') this.log.show(true);
        else if (choice === 'Open Settings')
          void vscode.commands.executeCommand('changeControl.openSettings', SETTING_KEYS.nodePath);
        else if (choice === 'Use a Remote Server') void vscode.commands.executeCommand('changeControl.useRemoteServer');
      });
  }

  private async setContext(): Promise<void> {
    await Promise.all([
      vscode.commands.executeCommand('setContext', CONTEXT_KEYS.connection, this.state.phase),
      vscode.commands.executeCommand('setContext', CONTEXT_KEYS.problem, problemOf(this.state)),
    ]);
  }

  // ------------------------------------------------------------------ connecting

  /** (Re)connects with the settings and the stored token now; never throws. */
  connect(): Promise<void> {
    return this.machine.connect();
  }

  /** The event stream opened or closed (the connection watches the service through it). */
  streamChanged(open: boolean): void {
    this.machine.streamChanged(open);
  }

  /**
   * The signed-in client once the connection attempt under way (if any) has ended; null when
   * it did not connect within `timeoutMs`. For what VS Code asks of the extension before it has
   * connected (documents restored with the window).
   */
  async settledClient(timeoutMs = 60_000): Promise<ApiClient | null> {
    const deadline = Date.now() + timeoutMs;
    // An attempt may be overtaken by a newer one (settings read at startup): wait for the last.
    while (!this.client && this.machine.attempt) {
      const attempt = this.machine.attempt;
      const left = deadline - Date.now();
      if (left <= 0) break;
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([attempt, new Promise((r) => (timer = setTimeout(r, left)))]);
      clearTimeout(timer);
      if (this.machine.attempt === attempt) break;
    }
    return this.client;
  }

  /** One attempt: the service (started when bundled), the stored token, who the user is. */
  private async attemptOnce(
    progress: (state: Extract<ConnectionState, { phase: 'starting' | 'connecting' }>) => void,
  ): Promise<AttemptOutcome> {
    const settings = this.settings();
    for (const p of settings.problems) this.log.warn(p);
    const target = settings.connection;
    if (target.mode === 'invalid')
      return { kind: 'failed', problem: 'invalidSettings', serviceUrl: null, bundled: false, message: target.error };
    const bundled = target.mode === 'bundled';
    let url: string;
    if (target.mode === 'remote') {
      await this.stopService();
      url = target.url;
    } else {
      if (!this.service || this.service.nodePath !== settings.nodePath) {
        await this.stopService();
        progress({ phase: 'starting' });
      }
      try {
        url = (await this.ensureService(settings.nodePath)).url;
      } catch (e) {
        return { kind: 'offline', problem: 'serviceFailed', serviceUrl: null, bundled, message: (e as Error).message };
      }
    }
    const token = await this.storedToken(target);
    if (!token) return { kind: 'signedOut', serviceUrl: url, bundled };
    progress({ phase: 'connecting', serviceUrl: url, bundled });
    const client = this.makeClient(url, token);
    try {
      const user = await client.me();
      this.clients.set(user, client);
      return { kind: 'connected', serviceUrl: url, bundled, user };
    } catch (e) {
      const error = asApiError(e);
      const problem = problemOfError(error);
      if (problem === 'tokenRefused' || error.kind === 'forbidden')
        return {
          kind: 'failed',
          problem: 'tokenRefused',
          serviceUrl: url,
          bundled,
          message: `The service refused the stored token (${error.message}). Sign in again.`,
        };
      return {
        kind: 'offline',
        problem: problem === 'unreachable' ? 'unreachable' : 'serverError',
        serviceUrl: url,
        bundled,
        message: error.message,
      };
    }
  }

  /** Whether the connected service still answers: `GET /api/status/`, a short wait. */
  private async probe(url: string): Promise<ProbeResult> {
    try {
      await this.makeClient(url, null, 2500).status();
      return { ok: true };
    } catch (e) {
      const error = asApiError(e);
      return {
        ok: false,
        problem: error.kind === 'unreachable' ? 'unreachable' : 'serverError',
        message: error.message,
      };
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
          if (this.settings().connection.mode === 'bundled')
            this.machine.serviceStopped(
              `The bundled service stopped (${signal ?? `exit code ${code}`}); starting it again.`,
            );
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

  /** The URL of the service to sign in to (the bundled one started when needed); undefined when it cannot start (said). */
  private async signInUrl(target: Exclude<ConnectionTarget, { mode: 'invalid' }>, nodePath: string | null) {
    if (target.mode === 'remote') return target.url;
    try {
      return (await this.ensureService(nodePath)).url;
    } catch (e) {
      void vscode.window.showErrorMessage((e as Error).message, 'Show Logs').then((c) => c && this.log.show(true));
      return undefined;
    }
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
    const url = await this.signInUrl(target, settings.nodePath);
    if (!url) return false;
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
    if (this.state.phase === 'connected') {
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
    const state = this.state;
    this.machine.signedOut('serviceUrl' in state ? state.serviceUrl : null, target.mode === 'bundled');
    void vscode.window.showInformationMessage('Signed out of Change Control.');
  }

  override dispose(): void {
    void this.stopService();
    super.dispose();
  }
}
