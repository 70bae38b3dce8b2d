import type { HostServices } from '../../server/host/core/context';
import { observeStatements } from '../../server/host/db/database';

/**
 * Resolves once the service runs nothing it set off without awaiting: a background task's
 * round, or what a commit woke (the gate's clock, the webhook outbox, the event streams).
 */
export function settled(svc: { host: HostServices }): Promise<void> {
  return svc.host.unawaited.settled();
}

/**
 * Runs `work` between two quiet moments of the service: nothing set off before it is still
 * running when it starts, and what it set off without awaiting has finished when it ends. Counts
 * taken around it (statements, computations, events) are then the work's own, every time.
 */
export async function quietly<T>(svc: { host: HostServices }, work: () => Promise<T>): Promise<T> {
  await settled(svc);
  const value = await work();
  await settled(svc);
  return value;
}

/** The statements the service sends for `work` (between two quiet moments: `quietly`). */
export async function statementsOf(svc: { host: HostServices }, work: () => Promise<unknown>): Promise<string[]> {
  await settled(svc);
  const seen: string[] = [];
  const stop = observeStatements(svc.host.db, (sql) => seen.push(sql));
  try {
    await work();
    await settled(svc);
  } finally {
    stop();
  }
  return seen;
}
