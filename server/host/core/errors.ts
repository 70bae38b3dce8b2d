/**
 * The closed set of domain errors. The domain throws these; one HTTP middleware maps them
 * to status codes. Nothing here knows about Express.
 */
export type FieldErrors = Record<string, string[]>;

export abstract class DomainError extends Error {
  abstract readonly status: number;
  /** The JSON answer: an object (`{detail}`, field errors), or a bulk write's list. */
  body(): Record<string, unknown> | Array<Record<string, unknown>> {
    return { detail: this.message };
  }
}

/** 400: field errors (`{field: [messages]}`) or a general `detail`. */
export class ValidationError extends DomainError {
  readonly status = 400;
  constructor(
    message: string,
    readonly fields?: FieldErrors,
  ) {
    super(message);
  }
  static field(field: string, message: string): ValidationError {
    return new ValidationError(`${field}: ${message}`, { [field]: [message] });
  }
  override body(): Record<string, unknown> {
    return this.fields ? { ...this.fields } : { detail: this.message };
  }
}

/**
 * The base of an error that answers `status` with `{detail}`; `message` defaults to
 * `defaultMessage` where the class has one.
 */
function statusError(status: number, defaultMessage?: string) {
  return class extends DomainError {
    readonly status = status;
    constructor(message = defaultMessage ?? '') {
      super(message);
    }
  };
}

/** 403 */
export class PermissionDenied extends statusError(403, 'You do not have permission to perform this action.') {}

/** 403 for missing or bad credentials. */
export class AuthenticationFailed extends statusError(403) {}

/** 404 */
export class NotFound extends statusError(404, 'Not found.') {}

/** 409: the action does not apply in the current state. */
export class Conflict extends DomainError {
  readonly status = 409;
  /** More of the answer than `detail` (what is in the way: ids and a count). */
  constructor(
    message: string,
    readonly extra?: Record<string, unknown>,
  ) {
    super(message);
  }
  override body(): Record<string, unknown> {
    return { detail: this.message, ...(this.extra ?? {}) };
  }
}

/** 412: a write's precondition (If-Match) does not hold: the object changed since the version the client names. */
export class PreconditionFailed extends statusError(412) {}

/** 422: the request is well-formed but cannot be processed as sent (an idempotency key reused for another request). */
export class Unprocessable extends statusError(422) {}

/** 405 */
export class MethodNotAllowed extends statusError(405) {}

/** 413 */
export class PayloadTooLarge extends statusError(413) {}

/** 429: too many failed credentials from this address (or for this username), or too many open streams; `retryAfter` in seconds. */
export class TooManyRequests extends DomainError {
  readonly status = 429;
  constructor(
    readonly retryAfter: number,
    message = `Too many failed attempts. Try again in ${retryAfter} seconds.`,
  ) {
    super(message);
  }
}

/** 415 */
export class UnsupportedMediaType extends statusError(415) {}

/**
 * A bulk write refused (every item of it: nothing is written): the errors as a list aligned
 * with the items sent, `{}` at the items with nothing to say; the status is the refusal's
 * (400 for invalid items, 403, 404, 409 for the item a write stopped at).
 */
export class BulkRefused extends DomainError {
  constructor(
    readonly status: number,
    readonly items: Array<Record<string, unknown>>,
  ) {
    const first = items.findIndex((e) => Object.keys(e).length > 0);
    super(`Item ${first} of the list: ${JSON.stringify(items[first] ?? {})}`);
  }

  /** The list of `count` items refused for what item `index` met (its own error). */
  static at(index: number, count: number, error: DomainError): BulkRefused {
    const items: Array<Record<string, unknown>> = Array.from({ length: count }, () => ({}));
    const body = error.body();
    items[index] = Array.isArray(body) ? { detail: error.message } : body;
    return new BulkRefused(error.status, items);
  }

  /** The list for items judged one by one (undefined: nothing to say); the status is the first refused item's. */
  static of(errors: ReadonlyArray<DomainError | undefined>): BulkRefused {
    const first = errors.find((e) => e !== undefined);
    return new BulkRefused(
      first?.status ?? 400,
      errors.map((e) => {
        if (!e) return {};
        const body = e.body();
        return Array.isArray(body) ? { detail: e.message } : body;
      }),
    );
  }

  override body(): Array<Record<string, unknown>> {
    return this.items;
  }
}
