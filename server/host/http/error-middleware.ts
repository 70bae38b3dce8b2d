import type { ErrorRequestHandler } from 'express';
import { ZodError } from 'zod';
import { DomainError, TooManyRequests } from '../core/errors';
import type { Logger } from '../core/logger';
import { constraintViolation } from '../db/constraint-errors';
import { zodFieldErrors } from './validation';

interface BodyParserError {
  type?: string;
  status?: number;
  message: string;
}

/** The one place errors become HTTP answers. Client input never yields a 5xx. */
export function errorMiddleware(log: Logger): ErrorRequestHandler {
  return (err: unknown, req, res, _next) => {
    if (res.headersSent) return;
    if (err instanceof DomainError) {
      if (err instanceof TooManyRequests) res.setHeader('Retry-After', String(err.retryAfter));
      res.status(err.status).json(err.body());
      return;
    }
    if (err instanceof ZodError) {
      res.status(400).json(zodFieldErrors(err));
      return;
    }
    const bp = err as BodyParserError;
    switch (bp?.type) {
      case 'entity.parse.failed':
        res.status(400).json({ detail: `JSON parse error - ${bp.message}` });
        return;
      case 'entity.encoding.invalid':
        res.status(400).json({ detail: bp.message });
        return;
      case 'entity.too.large':
        res.status(413).json({ detail: 'Request body is larger than 1 MiB.' });
        return;
      case 'encoding.unsupported':
      case 'charset.unsupported':
        res.status(415).json({ detail: bp.message });
        return;
      case 'request.aborted':
        return;
      default:
        break;
    }
    const message = err instanceof Error ? err.message : String(err);
    const violation = constraintViolation(err);
    if (violation?.kind === 'unique') {
      res.status(400).json({ [violation.column]: ['An object with this value already exists.'] });
      return;
    }
    if (violation?.kind === 'out-of-range') {
      res.status(400).json({ detail: 'A number is out of range.' });
      return;
    }
    if (violation?.kind === 'nul-character') {
      res.status(400).json({ detail: 'Text may not contain the NUL character (U+0000).' });
      return;
    }
    if (violation?.kind === 'foreign-key') {
      res.status(400).json({ detail: 'A related object does not exist.' });
      return;
    }
    if (typeof bp?.status === 'number' && bp.status >= 400 && bp.status < 500) {
      res.status(bp.status).json({ detail: message });
      return;
    }
    log.error(`${req.method} ${req.originalUrl}: ${err instanceof Error ? (err.stack ?? message) : message}`);
    res.status(500).json({ detail: 'Internal server error.' });
  };
}
