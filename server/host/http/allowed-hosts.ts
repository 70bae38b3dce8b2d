import type { NextFunction, Request, Response } from 'express';
import { ValidationError } from '../core/errors';

/**
 * The host names the service answers to, as NetBox's `ALLOWED_HOSTS`: a request whose `Host`
 * header names another is refused (400) before anything else runs, authentication included, so
 * a page of another site that a DNS rebinding points at the service cannot talk to it, and every
 * URL the service builds from the request (`url`, `next`, event links) names an allowed host.
 *
 * An entry is a host name or address (`localhost`, `127.0.0.1`, `[::1]`), `.example.net` (that
 * domain and its subdomains), or `*` (any host). Ports are ignored. The service also answers to
 * the address it listens on (`allow`).
 */
export class AllowedHosts {
  private readonly exact = new Set<string>();
  private readonly domains: string[] = [];
  private any = false;

  constructor(entries: readonly string[]) {
    for (const entry of entries) this.allow(entry);
  }

  /** Allows one more entry (the address the service listens on). */
  allow(entry: string): void {
    const e = entry.trim().toLowerCase();
    if (e === '*') this.any = true;
    else if (e.startsWith('.')) this.domains.push(e.slice(1));
    else if (e.includes(':') && !e.startsWith('[')) this.exact.add(`[${e}]`);
    else if (e !== '') this.exact.add(e);
  }

  /** Whether a `Host` header names an allowed host (a malformed one never does). */
  allows(header: string | undefined): boolean {
    const host = hostOf(header);
    if (host === null) return false;
    if (this.any || this.exact.has(host)) return true;
    return this.domains.some((d) => host === d || host.endsWith(`.${d}`));
  }

  /** The middleware: first of all, a request for a host not allowed is 400. */
  readonly guard = (req: Request, _res: Response, next: NextFunction): void => {
    const header = req.headers.host;
    if (this.allows(header)) {
      next();
      return;
    }
    const shown = (header ?? '').slice(0, 100);
    next(
      new ValidationError(
        header === undefined
          ? 'A Host header is required.'
          : `Invalid Host header "${shown}": the service does not answer to it. Add it to host.allowed_hosts in the configuration if it should.`,
      ),
    );
  };
}

/** A host name or address, or a bracketed IPv6 address, with an optional port. */
const HOST_HEADER = /^([a-z0-9.-]+|\[[a-f0-9]*:[a-f0-9.:]+\])(?::\d{1,5})?$/;

/** The host a `Host` header names, lower-cased without its port; null when it is malformed. */
export function hostOf(header: string | undefined): string | null {
  if (header === undefined) return null;
  const match = HOST_HEADER.exec(header.trim().toLowerCase());
  if (!match) return null;
  const host = match[1]!;
  return host.endsWith('.') && !host.startsWith('[') ? host.slice(0, -1) : host;
}
