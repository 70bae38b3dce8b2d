import { createHash, createHmac, randomUUID } from 'node:crypto';
import type { ReadMemo } from '../cache/read-memo';
import type { Scope } from '../core/scope';
import { evaluateConditionSet, readPath, sameJson, type ConditionSet, type ConditionSubject } from '../core/conditions';
import { enabledEventRules, queueWebhookDelivery, webhookRow } from './bus-repository';

/** Event types: the three object events plus whatever plugins register. */
export const OBJECT_EVENTS = ['object_created', 'object_updated', 'object_deleted'] as const;

export interface EmittedEvent {
  event: string;
  objectType: string;
  objectId: number;
  data: Record<string, unknown>;
  prechange: Record<string, unknown> | null;
  postchange: Record<string, unknown> | null;
}

/** The webhook payload (contract 3.5): no top-level `username` or `request_id`. */
export interface EventPayload {
  event: string;
  timestamp: string;
  object_type: string;
  data: Record<string, unknown>;
  snapshots: { prechange: Record<string, unknown> | null; postchange: Record<string, unknown> | null };
  request: { id: string; user: string | null };
}

export interface EventRuleRow {
  id: number;
  name: string;
  action_object_id: number | null;
  action_data: Record<string, unknown> | null;
  /** Who wrote the rule last: an action that writes acts with their authority, never the triggering user's. */
  created_by: number | null;
}

/** An action type's registration: what it runs, how its `action_data` is vetted, what its writes need. */
export interface ActionRegistration<C> {
  run: EventAction<C>;
  checkData?: ActionDataCheck;
  /**
   * The permissions the action's writes need: whoever creates or changes a rule with it must hold
   * them, and it runs only while the rule's creator does.
   */
  permissions?: readonly string[];
}

/** An event-rule action other than `webhook`; runs after the triggering write commits. */
export type EventAction<C> = (ctx: C, rule: EventRuleRow, payload: EventPayload, event: EmittedEvent) => Promise<void>;

/** Checks an event rule's `action_data` for an action type; returns the problem, or null when it is acceptable. */
export type ActionDataCheck = (data: Record<string, unknown> | null) => string | null;

/** The action type whose target is a webhook (`action_object_id`). */
export const WEBHOOK_ACTION = 'webhook';

export function signBody(secret: string, body: string): string {
  return createHmac('sha512', secret).update(body).digest('hex');
}

/** `Name: value` lines (blank lines ignored) as a header map. */
export function parseHeaderLines(text: string): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const line of text.split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim()] = line.slice(colon + 1).trim();
  }
  return headers;
}

/**
 * What an event rule's conditions read: plain attributes read the event's `data`,
 * `snapshots.prechange.<attr>` / `snapshots.postchange.<attr>` read one side, and
 * `changed`/`unchanged` compare the two sides.
 */
export function eventConditionSubject(
  event: Pick<EmittedEvent, 'data' | 'prechange' | 'postchange'>,
): ConditionSubject {
  return {
    values: (attr) => [readPath(event.data, attr)],
    side: (side, attr) => readPath(side === 'prechange' ? event.prechange : event.postchange, attr),
    changed: (attr) => !sameJson(readPath(event.prechange, attr), readPath(event.postchange, attr)),
  };
}

/** The event pipeline; `C` is the context listeners and actions run in (the host's `Ctx`). */
export class EventBus<C extends Scope> {
  private readonly types = new Set<string>(OBJECT_EVENTS);
  private readonly actions = new Map<string, ActionRegistration<C>>();
  private readonly listeners: Array<(ctx: C, e: EmittedEvent) => Promise<void>> = [];
  /** Wakes the webhook delivery worker after a commit that queued deliveries. */
  onQueued: () => void = () => {};

  /** `memo`: where the enabled rules are kept between writes (none: read at every event). */
  constructor(private readonly memo?: ReadMemo) {}

  registerType(name: string): void {
    this.types.add(name);
  }

  eventTypes(): string[] {
    return [...this.types];
  }

  /** Registers an action type: what it runs, how `action_data` is vetted when a rule is written, what its writes need. */
  registerAction(actionType: string, registration: ActionRegistration<C>): void {
    if (actionType === WEBHOOK_ACTION || this.actions.has(actionType))
      throw new Error(`event action ${actionType} is registered twice`);
    this.actions.set(actionType, registration);
  }

  /** The permissions an action type's writes need (none for a webhook). */
  actionPermissions(actionType: string): readonly string[] {
    return this.actions.get(actionType)?.permissions ?? [];
  }

  actionTypes(): string[] {
    return [WEBHOOK_ACTION, ...this.actions.keys()];
  }

  /** The problem with `action_data` for this action type, or null. */
  actionDataProblem(actionType: string, data: Record<string, unknown> | null): string | null {
    const check = this.actions.get(actionType)?.checkData;
    return check ? check(data) : null;
  }

  /** In-process subscribers (run inside the emitting transaction). */
  subscribe(listener: (ctx: C, e: EmittedEvent) => Promise<void>): void {
    this.listeners.push(listener);
  }

  /**
   * Emits an event inside the caller's transaction: event rules are matched now, webhook
   * deliveries are written to the durable outbox (so they commit or roll back with the
   * write), and other actions run after the commit.
   */
  async emit(ctx: C, event: EmittedEvent): Promise<void> {
    if (!this.types.has(event.event)) throw new Error(`unknown event type ${event.event}`);
    const now = ctx.host.clock.now().toISOString();
    const payload: EventPayload = {
      event: event.event,
      timestamp: now,
      object_type: event.objectType,
      data: event.data,
      snapshots: { prechange: event.prechange, postchange: event.postchange },
      request: { id: ctx.requestId, user: ctx.user?.username ?? null },
    };
    for (const listener of this.listeners) await listener(ctx, event);
    // One id per emitted event: each webhook's delivery of it carries an id derived from it.
    const eventId = randomUUID();

    // Kept while no rule is written (read memo): every write emits events. Shared: never changed.
    const enabled = () => enabledEventRules(ctx.db);
    const rules = this.memo
      ? await this.memo.get(ctx, 'event-rules:enabled', enabled, ['event_rules'])
      : await enabled();
    for (const rule of rules) {
      const objectTypes = JSON.parse(rule.object_types) as string[];
      const eventTypes = JSON.parse(rule.event_types) as string[];
      if (objectTypes.length > 0 && !objectTypes.includes(event.objectType)) continue;
      if (!eventTypes.includes(event.event)) continue;
      if (
        rule.conditions &&
        !evaluateConditionSet(JSON.parse(rule.conditions) as ConditionSet, eventConditionSubject(event))
      )
        continue;
      const ruleRow: EventRuleRow = {
        id: rule.id,
        name: rule.name,
        action_object_id: rule.action_object_id,
        action_data: rule.action_data ? (JSON.parse(rule.action_data) as Record<string, unknown>) : null,
        created_by: rule.created_by,
      };
      if (rule.action_type === WEBHOOK_ACTION) {
        await this.queueWebhook(ctx, ruleRow, payload, now, eventId);
        continue;
      }
      const action = this.actions.get(rule.action_type)?.run;
      if (!action) {
        ctx.host.log.warn(`event rule "${rule.name}": unknown action type ${rule.action_type}`);
        continue;
      }
      ctx.afterCommit(() => action(ctx, ruleRow, payload, event));
    }
  }

  private async queueWebhook(
    ctx: C,
    rule: EventRuleRow,
    payload: EventPayload,
    now: string,
    eventId: string,
  ): Promise<void> {
    if (rule.action_object_id === null) return;
    const hook = await webhookRow(ctx.db, rule.action_object_id);
    if (!hook) {
      ctx.host.log.warn(`event rule "${rule.name}": webhook ${rule.action_object_id} does not exist`);
      return;
    }
    const body = hook.body_template
      ? renderTemplate(hook.body_template, payload, hook.http_content_type)
      : JSON.stringify(payload);
    const headers: Record<string, string> = { 'Content-Type': hook.http_content_type };
    for (const [name, value] of Object.entries(parseHeaderLines(hook.additional_headers))) {
      for (const key of Object.keys(headers)) if (key.toLowerCase() === name.toLowerCase()) delete headers[key];
      headers[name] = value;
    }
    if (hook.secret) headers['X-Hook-Signature'] = signBody(hook.secret, body);
    // Set last, so no configured header replaces it: the same on every retry (it is stored with
    // the delivery), one per event and webhook (two rules sending one event to one webhook
    // share it), so a receiver discards the duplicates at-least-once delivery brings.
    for (const key of Object.keys(headers))
      if (key.toLowerCase() === DELIVERY_HEADER.toLowerCase()) delete headers[key];
    headers[DELIVERY_HEADER] = deliveryId(eventId, hook.id);
    await queueWebhookDelivery(ctx.db, {
      webhook_id: hook.id,
      event: payload.event,
      url: hook.payload_url,
      method: hook.http_method,
      headers: JSON.stringify(headers),
      body,
      attempts: 0,
      next_attempt_at: now,
      state: 'pending',
      last_error: '',
      created: now,
      delivered_at: null,
    });
    ctx.afterCommit(() => this.onQueued());
  }
}

/** The header naming a delivery: one id per event and webhook. */
export const DELIVERY_HEADER = 'X-Change-Control-Delivery';

/** A UUID-shaped id derived from the event's id and the webhook's. */
export function deliveryId(eventId: string, webhookId: number): string {
  const h = createHash('sha256').update(`${eventId}:${webhookId}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}

const PLACEHOLDER = /\{\{\s*([\w.]+)\s*\}\}/g;

function valueAt(payload: EventPayload, path: string): unknown {
  let value: unknown = payload;
  for (const part of path.split('.'))
    value = value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[part] : undefined;
  return value;
}

/** A value as plain text: nothing for a missing one, JSON for an object. */
function plain(value: unknown): string {
  if (value === undefined || value === null) return '';
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
}

const XML_ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' };

/**
 * A JSON template rendered so that values never change its shape: a placeholder inside a string
 * literal becomes the value's text escaped as string content; one outside becomes the value as a
 * JSON literal (`null` when missing). So `"title": "{{ data.title }}"` stays one key whatever the
 * title holds, and a rendered body has exactly the template's keys.
 */
function renderJson(template: string, payload: EventPayload): string {
  let out = '';
  let inString = false;
  let i = 0;
  while (i < template.length) {
    PLACEHOLDER.lastIndex = i;
    const found = PLACEHOLDER.exec(template);
    const next = found ? found.index : template.length;
    // The literal part up to the next placeholder, tracking whether it ends inside a string.
    for (let j = i; j < next; j++) {
      const c = template[j]!;
      if (inString && c === '\\') {
        j++;
        continue;
      }
      if (c === '"') inString = !inString;
    }
    out += template.slice(i, next);
    if (!found) break;
    const value = valueAt(payload, found[1]!);
    out += inString ? JSON.stringify(plain(value)).slice(1, -1) : JSON.stringify(value === undefined ? null : value);
    i = next + found[0].length;
  }
  return out;
}

/**
 * `{{ path.to.value }}` placeholders filled from the payload, each escaped for the body's syntax
 * (`contentType`): JSON (the default, and any `+json` type) as `renderJson` says; form bodies
 * percent-encoded; XML with its entities; any other type as plain text (objects as JSON).
 */
export function renderTemplate(template: string, payload: EventPayload, contentType = 'application/json'): string {
  const type = contentType.split(';')[0]!.trim().toLowerCase();
  if (type === 'application/json' || type.endsWith('+json')) return renderJson(template, payload);
  const escape =
    type === 'application/x-www-form-urlencoded'
      ? encodeURIComponent
      : type.endsWith('/xml') || type.endsWith('+xml')
        ? (text: string) => text.replace(/[&<>"']/g, (c) => XML_ENTITIES[c]!)
        : (text: string) => text;
  return template.replace(PLACEHOLDER, (_, path: string) => escape(plain(valueAt(payload, path))));
}
