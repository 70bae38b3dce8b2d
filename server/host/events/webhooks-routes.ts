import { z } from 'zod';
import { httpUrl } from '../../../contract/api/common';
import { objectBase, text } from '../../../contract/api/common';
import type { Ctx } from '../core/context';
import { Conflict } from '../core/errors';
import type { Host } from '../host';
import type { WebhooksTable, Row } from '../db/tables';
import { registerResource, type ApiObject } from '../http/resource';
import { rowReads } from '../http/row-reads';
import { rowWrites } from '../http/row-writes';
import { eventRulesDeliveringTo } from './event-rules-repository';
import { webhookRows, webhookTable } from './webhooks-repository';
import { briefObject, fieldsOf, givenFields } from '../core/api-object';

const OBJECT_TYPE = 'extras.webhook';
const PATH = '/api/extras/webhooks/';

export const HTTP_METHODS = ['POST', 'PUT', 'PATCH', 'GET', 'DELETE'] as const;

export const webhookOutput = z.object({
  ...objectBase,
  name: z.string(),
  payload_url: z.string(),
  http_method: z.enum(HTTP_METHODS),
  http_content_type: z.string(),
  additional_headers: z.string().describe('"Name: value" lines sent with every delivery.'),
  body_template: z
    .string()
    .describe('Empty: the JSON payload. Otherwise `{{ path.to.value }}` placeholders are filled from the payload.'),
  secret: z
    .string()
    .describe(
      'Shown to those who may view webhooks. With a secret, deliveries carry X-Hook-Signature: hex HMAC-SHA512 of the body.',
    ),
  ssl_verification: z.boolean(),
});
export type WebhookOut = z.infer<typeof webhookOutput> & ApiObject;

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

/** The first malformed line of `additional_headers`, or null. */
export function headerLinesProblem(textValue: string): string | null {
  const lines = textValue.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.trim() === '') continue;
    const colon = line.indexOf(':');
    const name = colon > 0 ? line.slice(0, colon).trim() : '';
    if (!HEADER_NAME.test(name)) return `Line ${i + 1}: expected "Name: value".`;
    if (!HEADER_VALUE.test(line.slice(colon + 1)))
      return `Line ${i + 1}: the value holds characters a header cannot carry.`;
  }
  return null;
}

const payloadUrl = httpUrl(500);

const contentType = z
  .string()
  .max(100, { error: 'at most 100 characters' })
  .regex(/^[\w!#$&^.+-]+\/[\w!#$&^.+-]+(\s*;\s*[\w!#$&^.+-]+=[^\r\n;]+)*$/, {
    error: 'Enter a media type, e.g. application/json.',
  });

const webhookWrite = z.strictObject({
  name: z
    .string()
    .trim()
    .min(1, { error: 'This field may not be blank.' })
    .max(150, { error: 'at most 150 characters' }),
  payload_url: payloadUrl,
  http_method: z.enum(HTTP_METHODS).optional(),
  http_content_type: contentType.optional(),
  additional_headers: z
    .string()
    .max(4096, { error: 'at most 4096 characters' })
    .superRefine((value, issue) => {
      const problem = headerLinesProblem(value);
      if (problem) issue.addIssue({ code: 'custom', message: problem });
    })
    .optional(),
  body_template: text().optional(),
  secret: z.string().max(255, { error: 'at most 255 characters' }).optional(),
  ssl_verification: z.boolean().optional(),
});
type WebhookWrite = z.infer<typeof webhookWrite>;

function present(ctx: Ctx, row: Row<WebhooksTable>): WebhookOut {
  return {
    ...briefObject(ctx, PATH, row.id, row.name),
    name: row.name,
    payload_url: row.payload_url,
    http_method: row.http_method as WebhookOut['http_method'],
    ...fieldsOf(row, ['http_content_type', 'additional_headers', 'body_template', 'secret']),
    ssl_verification: row.ssl_verification === 1,
    created: row.created,
    last_updated: row.last_updated,
  };
}

/** One webhook and the webhooks list. */
const webhooks = rowReads({
  from: webhookRows,
  byId: webhookTable.byId,
  present,
  columnFilters: { name: 'string', http_method: { type: 'choice', choices: HTTP_METHODS }, payload_url: 'string' },
  ordering: { id: 'id', name: 'name', created: 'created', last_updated: 'last_updated' },
  search: ['name', 'payload_url'],
});

function columns(input: Partial<WebhookWrite>, now: string): Partial<Omit<Row<WebhooksTable>, 'id'>> {
  const out: Partial<Omit<Row<WebhooksTable>, 'id'>> = {
    ...givenFields(input, [
      'name',
      'payload_url',
      'http_method',
      'http_content_type',
      'additional_headers',
      'body_template',
      'secret',
    ]),
    last_updated: now,
  };
  if (input.ssl_verification !== undefined) out.ssl_verification = input.ssl_verification ? 1 : 0;
  return out;
}

/** `/api/extras/webhooks/`: where event rules with action type `webhook` deliver. */
export function registerWebhooks(host: Host): void {
  registerResource(host.routes, {
    tag: 'extras',
    objectType: OBJECT_TYPE,
    path: PATH,
    output: webhookOutput,
    list: webhooks.list,
    get: webhooks.get,
    ...rowWrites({
      table: webhookTable,
      body: webhookWrite,
      partial: webhookWrite.partial(),
      uniqueName: { column: 'name', message: 'A webhook with this name already exists.' },
      insert: (input: WebhookWrite, now) => ({
        name: input.name,
        payload_url: input.payload_url,
        http_method: 'POST',
        http_content_type: 'application/json',
        additional_headers: '',
        body_template: '',
        secret: '',
        ssl_verification: 1,
        ...columns(input, now),
        created: now,
        last_updated: now,
      }),
      columns,
    }),
    remove: async (ctx, existing) => {
      const rules = await eventRulesDeliveringTo(ctx, existing.id);
      if (rules.length > 0) {
        throw new Conflict(
          `Webhook "${existing.name}" is the action of event rule(s) ${rules.map((name) => `"${name}"`).join(', ')}; change or delete them first.`,
        );
      }
      await webhookTable.remove(ctx, existing.id);
    },
  });
}
