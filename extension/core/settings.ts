// The extension's settings: their keys (package.json declares exactly these) and how raw
// configuration values become a checked Settings object.

export const SETTING_KEYS = {
  serverUrl: 'changeControl.serverUrl',
  nodePath: 'changeControl.nodePath',
  notificationsEnabled: 'changeControl.notifications.enabled',
  pollIntervalSeconds: 'changeControl.notifications.pollIntervalSeconds',
} as const;

export const SETTING_DEFAULTS = {
  serverUrl: '',
  nodePath: '',
  notificationsEnabled: true,
  pollIntervalSeconds: 60,
} as const;

export const MIN_POLL_SECONDS = 10;

/**
 * The settings that decide where the token goes: the service URL (the token is sent there) and
 * the Node.js that runs the bundled service (it is started with the administrator token).
 * Machine-scoped in package.json, and read here from user or machine (remote) settings only: a
 * folder's `.vscode/settings.json` can never send the token elsewhere.
 */
export const MACHINE_SETTINGS: readonly string[] = [SETTING_KEYS.serverUrl, SETTING_KEYS.nodePath];

/** What `WorkspaceConfiguration.inspect()` reports of a setting (the parts read here). */
export interface SettingInspection {
  defaultValue?: unknown;
  globalValue?: unknown;
  workspaceValue?: unknown;
  workspaceFolderValue?: unknown;
}

/** A setting's value from `inspect()`: for a machine setting the user's (else the default), never a workspace's. */
export function settingValue(key: string, inspection: SettingInspection | undefined): unknown {
  if (!inspection) return undefined;
  if (MACHINE_SETTINGS.includes(key)) return inspection.globalValue ?? inspection.defaultValue;
  return (
    inspection.workspaceFolderValue ?? inspection.workspaceValue ?? inspection.globalValue ?? inspection.defaultValue
  );
}

export type ConnectionTarget =
  { mode: 'bundled' } | { mode: 'remote'; url: string } | { mode: 'invalid'; error: string };

export interface Settings {
  connection: ConnectionTarget;
  /** The Node.js that runs the bundled service; null: the editor's own runtime. */
  nodePath: string | null;
  notifications: { enabled: boolean; pollIntervalMs: number };
  /** Values that were wrong and replaced by their defaults, for the log. */
  problems: string[];
}

/** The service's base URL without a trailing slash, or an error message. */
export function normalizeBaseUrl(raw: string): { url: string } | { error: string } {
  const trimmed = raw.trim();
  let parsed: URL;
  try {
    parsed = new URL(trimmed);
  } catch {
    return { error: `"${trimmed}" is not a URL (expected e.g. http://127.0.0.1:8000)` };
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    return { error: `"${trimmed}" is not an http or https URL` };
  if (parsed.search || parsed.hash) return { error: `"${trimmed}" must not carry a query or fragment` };
  return { url: `${parsed.origin}${parsed.pathname.replace(/\/+$/, '')}` };
}

/** Reads settings through `get` (configuration lookups by full key). */
export function parseSettings(get: (key: string) => unknown): Settings {
  const problems: string[] = [];

  const rawUrl = get(SETTING_KEYS.serverUrl);
  let connection: ConnectionTarget;
  if (rawUrl === undefined || rawUrl === null || (typeof rawUrl === 'string' && rawUrl.trim() === '')) {
    connection = { mode: 'bundled' };
  } else if (typeof rawUrl !== 'string') {
    connection = { mode: 'invalid', error: `${SETTING_KEYS.serverUrl} must be a string` };
  } else {
    const normalized = normalizeBaseUrl(rawUrl);
    connection =
      'url' in normalized
        ? { mode: 'remote', url: normalized.url }
        : { mode: 'invalid', error: `${SETTING_KEYS.serverUrl}: ${normalized.error}` };
  }

  const rawNode = get(SETTING_KEYS.nodePath);
  let nodePath: string | null = null;
  if (typeof rawNode === 'string' && rawNode.trim() !== '') nodePath = rawNode.trim();
  else if (rawNode !== undefined && rawNode !== null && rawNode !== '')
    problems.push(`${SETTING_KEYS.nodePath} must be a path; using the editor's runtime`);

  const rawEnabled = get(SETTING_KEYS.notificationsEnabled);
  let enabled: boolean = SETTING_DEFAULTS.notificationsEnabled;
  if (typeof rawEnabled === 'boolean') enabled = rawEnabled;
  else if (rawEnabled !== undefined && rawEnabled !== null)
    problems.push(`${SETTING_KEYS.notificationsEnabled} must be true or false`);

  const rawPoll = get(SETTING_KEYS.pollIntervalSeconds);
  let seconds: number = SETTING_DEFAULTS.pollIntervalSeconds;
  if (typeof rawPoll === 'number' && Number.isFinite(rawPoll)) {
    seconds = Math.max(MIN_POLL_SECONDS, Math.round(rawPoll));
    if (rawPoll < MIN_POLL_SECONDS)
      problems.push(`${SETTING_KEYS.pollIntervalSeconds} is at least ${MIN_POLL_SECONDS}`);
  } else if (rawPoll !== undefined && rawPoll !== null) {
    problems.push(`${SETTING_KEYS.pollIntervalSeconds} must be a number of seconds`);
  }

  return { connection, nodePath, notifications: { enabled, pollIntervalMs: seconds * 1000 }, problems };
}

/** Reads settings through `inspect` (`WorkspaceConfiguration.inspect` by full key), machine settings from the user's only. */
export function parseSettingsFrom(inspect: (key: string) => SettingInspection | undefined): Settings {
  return parseSettings((key) => settingValue(key, inspect(key)));
}

/**
 * Where the token of a connection is kept in SecretStorage: one per service URL (scheme, host,
 * port and path), so a token is only ever sent to the service it was signed in to; a new URL
 * has none until the user signs in there.
 */
export function tokenSecretKey(target: ConnectionTarget): string | null {
  if (target.mode === 'bundled') return 'changeControl.token.bundled';
  if (target.mode === 'remote') return `changeControl.token.${target.url}`;
  return null;
}

/** The bundled service's admin token (it is started with this token). */
export const BUNDLED_ADMIN_SECRET = 'changeControl.bundledAdminToken';
