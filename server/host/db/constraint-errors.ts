/**
 * A write the database refused for a constraint, recognised the same way on SQLite and on
 * PostgreSQL (whose drivers report it differently): a unique value taken (with its first
 * column), or a row naming another that does not exist.
 */
export type ConstraintViolation = { kind: 'unique'; column: string } | { kind: 'foreign-key' };

export function constraintViolation(err: unknown): ConstraintViolation | null {
  if (!(err instanceof Error)) return null;
  const { code, detail } = err as Error & { code?: string; detail?: string };
  if (code === '23505') return { kind: 'unique', column: /Key \(([^,)]+)/.exec(detail ?? '')?.[1]?.trim() ?? 'non_field_errors' };
  if (code === '23503') return { kind: 'foreign-key' };
  const unique = /UNIQUE constraint failed: \w+\.(\w+)/.exec(err.message);
  if (unique) return { kind: 'unique', column: unique[1]! };
  if (/FOREIGN KEY constraint failed/.test(err.message)) return { kind: 'foreign-key' };
  return null;
}
