import { readFileSync } from 'node:fs';
import { z } from 'zod';

/** The configuration file (contract section 5). Every key is optional; unknown keys refuse the start. */
const externalCheck = z.union([
  z.string().min(1),
  z.tuple([z.string().min(1), z.string()]),
  /** With who alone may report it (usernames, group names) and how long it may stay pending. */
  z.strictObject({
    name: z.string().min(1),
    label: z.string().optional(),
    reporter: z
      .strictObject({ users: z.array(z.string().min(1)).default([]), groups: z.array(z.string().min(1)).default([]) })
      .optional(),
    timeout_minutes: z.number().int().min(1).optional(),
  }),
]);

export const configSchema = z.strictObject({
  host: z
    .strictObject({
      changelog_retention_days: z.number().int().min(1).default(90),
      object_types: z.literal('default').default('default'),
      /** How many answers the read memo keeps between writes (0 keeps none). */
      read_cache_entries: z.number().int().min(0).default(256),
      /**
       * The host names the service answers to (NetBox's ALLOWED_HOSTS): names, addresses,
       * `.domain` (and its subdomains) or `*`; the address it listens on is added. Another Host is 400.
       */
      allowed_hosts: z.array(z.string().trim().min(1).max(253)).default(['localhost', '127.0.0.1', '[::1]']),
      /** Connections open at once; more are closed as they arrive. */
      max_connections: z.number().int().min(1).default(256),
    })
    .prefault({}),
  change_control: z
    .strictObject({
      enable_builtin_checks: z.union([z.boolean(), z.array(z.string())]).default(true),
      required_external_checks: z.array(externalCheck).default([]),
      branch_page_placement: z
        .union([z.enum(['right_page', 'alerts', 'both']), z.array(z.enum(['right_page', 'alerts', 'both']))])
        .default(['right_page']),
      protect_main: z.boolean().default(false),
      protect_main_scope: z.array(z.string().regex(/^[a-z_][a-z0-9_]*\.([a-z_][a-z0-9_]*|\*)$/)).default([]),
      enforce_merge_gate: z.boolean().default(true),
      notify_reviewers: z.boolean().default(true),
      enable_auto_merge: z.boolean().default(true),
      auto_merge_interval: z.number().int().min(1).default(10),
      contributors_can_approve: z.boolean().default(false),
      /** What makes an approval stale: a change of the branch's net diff (`content`) or any write in the branch (`write`). */
      stale_approval_basis: z.enum(['content', 'write']).default('content'),
    })
    .prefault({}),
  check_plugins: z.array(z.string().min(1)).default([]),
});

export type Config = z.infer<typeof configSchema>;
export type ConfigInput = z.input<typeof configSchema>;

export class ConfigError extends Error {}

/** Validates a configuration object; the error names the offending key. */
export function parseConfig(input: unknown): Config {
  const result = configSchema.safeParse(input ?? {});
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  if (issue.code === 'unrecognized_keys') {
    const path = [...issue.path, issue.keys[0]].join('.');
    throw new ConfigError(`unknown configuration key "${path}"`);
  }
  const path = issue.path.join('.') || '(root)';
  throw new ConfigError(`invalid configuration value for "${path}": ${issue.message}`);
}

export function loadConfigFile(path: string): Config {
  let raw: string;
  try {
    raw = readFileSync(path, 'utf8');
  } catch (err) {
    throw new ConfigError(`cannot read configuration file ${path}: ${(err as Error).message}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch (err) {
    throw new ConfigError(`configuration file ${path} is not valid JSON: ${(err as Error).message}`);
  }
  return parseConfig(json);
}

export const defaultConfig = (): Config => parseConfig({});
