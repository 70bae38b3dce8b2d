import type { Server } from 'node:http';

/**
 * Limits for a local service's HTTP server: a client that never finishes its headers or its
 * body, or leaves a kept-alive connection idle, does not hold a connection for Node's defaults
 * (up to minutes); and at most `maxConnections` connections are open at once (more are closed
 * as they arrive). An event stream is not cut: its request is complete once its headers are in.
 */
export const SERVER_TIMEOUTS = {
  /** The request's headers must arrive within this. */
  headersMs: 10_000,
  /** The whole request, its body included, must arrive within this. */
  requestMs: 60_000,
  /** A kept-alive connection idle this long is closed. */
  keepAliveMs: 5_000,
} as const;

/** Options of `createServer`: the timeouts above are enforced within a second of passing (Node checks every 30 s by default). */
export const SERVER_OPTIONS = { connectionsCheckingInterval: 1_000 } as const;

export function limitServer(server: Server, options: { maxConnections?: number } = {}): Server {
  server.headersTimeout = SERVER_TIMEOUTS.headersMs;
  server.requestTimeout = SERVER_TIMEOUTS.requestMs;
  server.keepAliveTimeout = SERVER_TIMEOUTS.keepAliveMs;
  if (options.maxConnections !== undefined) server.maxConnections = options.maxConnections;
  return server;
}
