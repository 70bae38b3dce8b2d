// The closed set of ways a call to the service can fail, and how each is told to the user.

export const API_ERROR_KINDS = [
  'unreachable', // no answer: refused, reset, DNS, timeout
  'signedOut', // no token to send
  'badCredentials', // the token (or username and password) was refused
  'forbidden', // signed in, but not allowed
  'notFound',
  'conflict', // 409: the action does not apply now
  'stale', // 412: the object changed since the version the write named (If-Match)
  'invalid', // 400: the service refused the input
  'server', // 5xx
  'badResponse', // an answer the contract does not describe
] as const;
export type ApiErrorKind = (typeof API_ERROR_KINDS)[number];

export class ApiError extends Error {
  constructor(
    readonly kind: ApiErrorKind,
    message: string,
    readonly status: number | null = null,
    /** Field errors of a 400 answer (`{field: [messages]}`). */
    readonly fields: Record<string, string[]> = {},
    /** The answer's body as parsed (for answers that say more than `detail`, e.g. a merge's conflicts). */
    readonly body: unknown = undefined,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/** 403 answers about credentials rather than permissions (see server/http/auth.ts wording). */
const CREDENTIAL_WORDS = /\b(token|credentials|inactive|username or password)\b/i;

/** The text of an error body: `detail`, or field errors joined as "field: message". */
export function errorBodyText(body: unknown): { detail: string; fields: Record<string, string[]> } {
  if (body && typeof body === 'object' && !Array.isArray(body)) {
    const record = body as Record<string, unknown>;
    if (typeof record.detail === 'string') return { detail: record.detail, fields: {} };
    const fields: Record<string, string[]> = {};
    for (const [key, value] of Object.entries(record)) {
      if (Array.isArray(value)) fields[key] = value.map(String);
      else if (typeof value === 'string') fields[key] = [value];
    }
    const parts = Object.entries(fields).map(([k, msgs]) =>
      k === 'non_field_errors' ? msgs.join(' ') : `${k}: ${msgs.join(' ')}`,
    );
    if (parts.length) return { detail: parts.join('; '), fields };
  }
  if (typeof body === 'string' && body.trim() && body.length < 300) return { detail: body.trim(), fields: {} };
  return { detail: '', fields: {} };
}

/** An ApiError from an HTTP status and body that were not a success. */
export function errorFromResponse(status: number, body: unknown): ApiError {
  const { detail, fields } = errorBodyText(body);
  const said = detail || `HTTP ${status}`;
  if (status === 401) return new ApiError('badCredentials', said, status);
  if (status === 403) return new ApiError(CREDENTIAL_WORDS.test(detail) ? 'badCredentials' : 'forbidden', said, status);
  if (status === 404)
    return new ApiError('notFound', detail && detail !== 'Not found.' ? detail : 'Not found.', status);
  if (status === 409) return new ApiError('conflict', said, status, fields, body);
  if (status === 412) return new ApiError('stale', said, status);
  if (status >= 500)
    return new ApiError('server', `The service failed (HTTP ${status})${detail ? `: ${detail}` : ''}.`, status);
  return new ApiError('invalid', said, status, fields);
}

/** Anything thrown by a call, as an ApiError (unknown errors become `badResponse`). */
export function asApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new ApiError('badResponse', message);
}

/** What the user can do about a failure, in the order the buttons show. */
export const ERROR_ACTIONS = ['Retry', 'Sign In', 'Show Logs'] as const;
export type ErrorAction = (typeof ERROR_ACTIONS)[number];

export interface PresentedError {
  message: string;
  actions: ErrorAction[];
}

/**
 * A message for the user about a failed step (`what`, e.g. "Submitting CR-12") and the actions
 * worth offering. Never a stack trace.
 */
export function presentError(what: string, error: unknown, opts: { retryable?: boolean } = {}): PresentedError {
  const e = asApiError(error);
  const retry: ErrorAction[] = opts.retryable === false ? [] : ['Retry'];
  switch (e.kind) {
    case 'unreachable':
      return {
        message: `${what} failed: the Change Control service cannot be reached (${e.message}).`,
        actions: [...retry, 'Show Logs'],
      };
    case 'signedOut':
      return { message: `${what} needs you to sign in to the Change Control service.`, actions: ['Sign In'] };
    case 'badCredentials':
      return {
        message: `${what} failed: the service refused your sign-in (${e.message}). Sign in again.`,
        actions: ['Sign In', 'Show Logs'],
      };
    case 'forbidden':
      return { message: `${what} is not allowed for you: ${e.message}`, actions: ['Show Logs'] };
    case 'notFound':
      return {
        message: `${what} failed: not found on the service. It may have been deleted, or the service does not offer it.`,
        actions: [...retry, 'Show Logs'],
      };
    case 'conflict':
    case 'stale':
      return { message: `${what} was refused: ${e.message}`, actions: [] };
    case 'invalid':
      return { message: `${what} was refused: ${e.message}`, actions: ['Show Logs'] };
    case 'server':
      return { message: `${what} failed: ${e.message}`, actions: [...retry, 'Show Logs'] };
    case 'badResponse':
      return {
        message: `${what} failed: unexpected answer from the service (${e.message}).`,
        actions: [...retry, 'Show Logs'],
      };
  }
}
