/**
 * A write the database refused for a constraint, recognised the same way on SQLite and on
 * PostgreSQL (whose drivers report it differently): a unique value taken (with its first
 * column), a row naming another that does not exist, or text PostgreSQL cannot store.
 */
export type ConstraintViolation =
  { kind: 'unique'; column: string } | { kind: 'foreign-key' } | { kind: 'nul-character' } | { kind: 'out-of-range' };

export function constraintViolation(err: unknown): ConstraintViolation | null {
  if (!(err instanceof Error)) return null;
  const { code, detail } = err as Error & { code?: string; detail?: string };
  if (code === '23505')
    return { kind: 'unique', column: /Key \(([^,)]+)/.exec(detail ?? '')?.[1]?.trim() ?? 'non_field_errors' };
  if (code === '23503') return { kind: 'foreign-key' };
  // PostgreSQL's text cannot hold U+0000 (SQLite's can): such input is refused, never a 500.
  if (code === '22021' || code === '22P05') return { kind: 'nul-character' };
  // A number beyond 64 bits compared with an integer column (SQLite compares it as a real).
  if (code === '22003') return { kind: 'out-of-range' };
  const unique = /UNIQUE constraint failed: \w+\.(\w+)/.exec(err.message);
  if (unique) return { kind: 'unique', column: unique[1]! };
  if (/FOREIGN KEY constraint failed/.test(err.message)) return { kind: 'foreign-key' };
  return null;
}
