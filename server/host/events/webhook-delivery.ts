import type { ClockTimer } from '../core/clock';
import type { BackgroundTask, Host } from '../host';
import { withClaim } from '../db/claims';
import type { WebhookOutboxTable, Row } from '../db/tables';
import { sendRequest, type OutgoingRequest, type SendResult } from './http-send';
import { deliveryById, deliveryTlsSetting, dueDeliveries, recordDeliveryAttempt } from './webhook-delivery-repository';

type OutboxRow = Row<WebhookOutboxTable>;

export interface DeliveryOptions {
  /** Interval of the polling loop, on the host clock (default 1 s). */
  pollMs?: number;
  /** How long one delivery may take (default 10 s). */
  timeoutMs?: number;
  /** Wait before the first retry; doubled on each further failure (default 5 s). */
  retryBaseMs?: number;
  /** Longest wait between attempts (default 1 h). */
  retryCapMs?: number;
  /** Attempts before a delivery is given up as `failed` (default 10). */
  maxAttempts?: number;
  /** Deliveries in flight at once (default 8; never two for the same row). */
  concurrency?: number;
  /** Replaces the HTTP sender (tests). */
  send?: (out: OutgoingRequest) => Promise<SendResult>;
}

const DEFAULTS = {
  pollMs: 1000,
  timeoutMs: 10_000,
  retryBaseMs: 5000,
  retryCapMs: 3_600_000,
  maxAttempts: 10,
  concurrency: 8,
} as const;

/** Wait after the `attempts`-th failed attempt: base, 2×base, 4×base … capped. */
export function retryDelay(attempts: number, baseMs: number, capMs: number): number {
  return Math.min(capMs, baseMs * 2 ** Math.max(0, Math.min(attempts - 1, 40)));
}

/**
 * Sends the webhook deliveries of the durable outbox (`webhook_outbox`, written in the same
 * transaction as the change that caused them). It wakes after every commit that queued a
 * delivery and every `pollMs` of the host clock (a test's manual clock polls only when moved);
 * "due" is decided with the host clock. A delivery answered 2xx is
 * `delivered`; anything else is retried with exponential backoff and, after `maxAttempts`,
 * marked `failed` with the last error kept. A row is never sent twice at once. Stopping lets
 * in-flight sends finish and leaves the rest pending in the database for the next start.
 */
export class WebhookDeliveryWorker implements BackgroundTask {
  private readonly options: Required<Omit<DeliveryOptions, 'send'>>;
  private readonly send: (out: OutgoingRequest) => Promise<SendResult>;
  private readonly inFlight = new Map<number, Promise<void>>();
  private timer: ClockTimer | undefined;
  private running = false;
  private stopping = false;
  private scan: Promise<void> | null = null;
  private rescan = false;

  constructor(
    private readonly host: Host,
    options: DeliveryOptions = {},
  ) {
    const { send, ...rest } = options;
    this.options = { ...DEFAULTS, ...rest };
    this.send = send ?? sendRequest;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.stopping = false;
    this.host.events.onQueued = () => void this.wake();
    this.poll();
  }

  /** Looks now, and again `pollMs` later. */
  private poll(): void {
    if (!this.running) return;
    void this.wake();
    const next = new Date(this.host.clock.now().getTime() + this.options.pollMs);
    this.timer = this.host.clock.at(next, () => this.poll());
  }

  async stop(): Promise<void> {
    if (!this.running) return;
    this.stopping = true;
    this.running = false;
    this.host.events.onQueued = () => {};
    this.timer?.cancel();
    this.timer = undefined;
    await this.scan;
    await Promise.allSettled([...this.inFlight.values()]);
  }

  /** Looks for due deliveries now and starts them; resolves once the look (not the sends) is done. */
  wake(): Promise<void> {
    if (!this.running) return Promise.resolve();
    if (this.scan) {
      this.rescan = true;
      return this.scan;
    }
    this.scan = this.host.unawaited.run(
      this.scanLoop().finally(() => {
        this.scan = null;
      }),
    );
    return this.scan;
  }

  /** Sends everything due now and waits until it is settled (used by tests and tools). */
  async runDue(): Promise<void> {
    for (let round = 0; round < 1000 && this.running; round++) {
      await this.wake();
      if (this.inFlight.size === 0 && !(await this.hasDue())) return;
      await Promise.allSettled([...this.inFlight.values()]);
    }
  }

  private async hasDue(): Promise<boolean> {
    const [row] = await this.due(1);
    return row !== undefined && !this.inFlight.has(row.id);
  }

  private due(limit: number): Promise<OutboxRow[]> {
    return dueDeliveries(this.host.db, this.host.clock.now().toISOString(), [...this.inFlight.keys()], limit);
  }

  private async scanLoop(): Promise<void> {
    try {
      do {
        this.rescan = false;
        const room = this.options.concurrency - this.inFlight.size;
        if (room <= 0 || this.stopping) return;
        const rows = await this.due(room);
        for (const row of rows) {
          if (this.stopping || this.inFlight.has(row.id)) continue;
          const delivery = this.host.unawaited.run(
            this.deliver(row).finally(() => {
              this.inFlight.delete(row.id);
              void this.wake();
            }),
          );
          this.inFlight.set(row.id, delivery);
        }
        if (rows.length === room) this.rescan = true;
      } while (this.rescan && !this.stopping);
    } catch (err) {
      this.host.log.error(`webhook delivery: cannot read the outbox: ${(err as Error).message}`);
    }
  }

  /**
   * One attempt, made by one instance: the delivery is claimed (`withClaim`), then read again;
   * another instance that made this attempt meanwhile has moved it on (delivered, failed, or a
   * later retry time), and it is left alone.
   */
  private async deliver(listed: OutboxRow): Promise<void> {
    try {
      await withClaim(this.host.db, 'webhook-delivery', listed.id, async () => {
        const row = await deliveryById(this.host.db, listed.id);
        if (
          !row ||
          row.state !== 'pending' ||
          row.attempts !== listed.attempts ||
          row.next_attempt_at > this.host.clock.now().toISOString()
        )
          return;
        await this.attempt(row);
      });
    } catch (err) {
      this.host.log.error(`webhook delivery ${listed.id}: ${(err as Error).message}`);
    }
  }

  private async attempt(row: OutboxRow): Promise<void> {
    let error: string | null = null;
    try {
      const hook = await deliveryTlsSetting(this.host.db, row.webhook_id);
      const result = await this.send({
        url: row.url,
        method: row.method,
        headers: JSON.parse(row.headers) as Record<string, string>,
        body: row.body,
        timeoutMs: this.options.timeoutMs,
        verifyTls: hook ? hook.ssl_verification === 1 : true,
      });
      if (result.status < 200 || result.status >= 300) {
        error = `HTTP ${result.status}${result.snippet ? `: ${result.snippet}` : ''}`;
      }
    } catch (err) {
      const e = err as Error & { code?: string };
      error = e.code && !e.message.includes(e.code) ? `${e.code}: ${e.message}` : e.message;
    }
    try {
      await this.record(row, error);
    } catch (err) {
      this.host.log.error(`webhook delivery ${row.id}: cannot record the attempt: ${(err as Error).message}`);
    }
  }

  private async record(row: OutboxRow, error: string | null): Promise<void> {
    const now = this.host.clock.now();
    const attempts = row.attempts + 1;
    if (error === null) {
      await recordDeliveryAttempt(this.host.db, row.id, {
        state: 'delivered',
        attempts,
        delivered_at: now.toISOString(),
        last_error: '',
      });
      return;
    }
    const message = error.slice(0, 500);
    if (attempts >= this.options.maxAttempts) {
      await recordDeliveryAttempt(this.host.db, row.id, { state: 'failed', attempts, last_error: message });
      this.host.log.warn(`webhook delivery ${row.id} to ${row.url} failed after ${attempts} attempts: ${message}`);
      return;
    }
    const next = new Date(now.getTime() + retryDelay(attempts, this.options.retryBaseMs, this.options.retryCapMs));
    await recordDeliveryAttempt(this.host.db, row.id, {
      attempts,
      next_attempt_at: next.toISOString(),
      last_error: message,
    });
  }
}

/** Registers the delivery worker as a background task of the host. */
export function registerWebhookDelivery(host: Host, options: DeliveryOptions = {}): WebhookDeliveryWorker {
  const worker = new WebhookDeliveryWorker(host, options);
  host.background.push(worker);
  return worker;
}

/** The host's delivery worker, if one is registered. */
export function webhookDeliveryWorker(host: Host): WebhookDeliveryWorker | undefined {
  return host.background.find((t): t is WebhookDeliveryWorker => t instanceof WebhookDeliveryWorker);
}
