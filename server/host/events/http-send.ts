import { request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';

export interface OutgoingRequest {
  url: string;
  method: string;
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
  /** False accepts any TLS certificate (a webhook's `ssl_verification: false`). */
  verifyTls: boolean;
}

export interface SendResult {
  status: number;
  /** The start of the answer's body, for error messages. */
  snippet: string;
}

const SNIPPET = 200;

/**
 * Sends one HTTP request and resolves with the status once the answer is read, or rejects
 * (connection refused, TLS failure, timeout). Redirects are not followed.
 */
export function sendRequest(out: OutgoingRequest): Promise<SendResult> {
  return new Promise((resolve, reject) => {
    const url = new URL(out.url);
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const payload = Buffer.from(out.body, 'utf8');
    let settled = false;
    let deadline: NodeJS.Timeout | undefined = undefined;
    const finish = (err: Error | null, result?: SendResult): void => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      if (err) reject(err);
      else resolve(result!);
    };
    let req: ClientRequest;
    try {
      req = send(
        url,
        {
          method: out.method,
          headers: { ...out.headers, 'Content-Length': String(payload.length) },
          rejectUnauthorized: out.verifyTls,
        },
        (res: IncomingMessage) => {
          let snippet = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => {
            if (snippet.length < SNIPPET) snippet += chunk.slice(0, SNIPPET - snippet.length);
          });
          res.on('end', () => finish(null, { status: res.statusCode ?? 0, snippet }));
          res.on('error', (err) => finish(err));
          res.on('aborted', () => finish(new Error('the answer was cut off')));
        },
      );
    } catch (err) {
      finish(err instanceof Error ? err : new Error(String(err)));
      return;
    }
    deadline = setTimeout(() => req.destroy(new Error(`no answer within ${out.timeoutMs} ms`)), out.timeoutMs);
    req.on('error', (err) => finish(err));
    req.end(payload);
  });
}
