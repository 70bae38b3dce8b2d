import { AsyncLocalStorage } from 'node:async_hooks';
import type { OperationNode, RootOperationNode } from 'kysely';

/**
 * The check that a memoized answer names every table it is computed from (`ReadMemo.get`'s
 * `reads`): while auditing is on (the tests turn it on), each statement a computation runs is
 * compared with the tables its answer names, and one reading another table fails at once, as
 * does a cached read inside it naming a table the outer answer does not (or naming none). An
 * answer naming too few tables would be served stale after a write of the others; this makes
 * that a failing test instead. Off (in the service), it costs one test per statement.
 */
let auditing = false;

interface Audited {
  readonly key: string;
  readonly reads: ReadonlySet<string>;
}

const current = new AsyncLocalStorage<Audited | null>();

/** Turns the audit on or off (tests). */
export function auditMemoReads(on: boolean): void {
  auditing = on;
}

/** Whether the audit is on. */
export function auditingMemoReads(): boolean {
  return auditing;
}

export class UnnamedTableRead extends Error {}

/**
 * `work` run outside any audited computation (the compilation of a statement with placeholders
 * for its values). With the audit off there is nothing to step out of, and the store is never
 * entered: once entered, Node tracks every promise of the process for it (async hooks).
 */
export function unaudited<T>(work: () => T): T {
  return auditing ? current.run(null, work) : work();
}

/**
 * What a cached read of `key`, naming `reads` (undefined: it depends on everything, and nothing
 * is checked inside it), computes with: `compute` run as that answer's computation. Inside
 * another answer's computation, it must name a subset of the outer one's tables (served from
 * the cache, its statements are not seen).
 */
export function auditedCompute<T>(
  key: string,
  reads: readonly string[] | undefined,
  compute: () => Promise<T>,
): () => Promise<T> {
  if (!auditing) return compute;
  const outer = current.getStore();
  if (outer) {
    const missing = reads ? reads.filter((t) => !outer.reads.has(t)) : ['(every table)'];
    if (missing.length > 0)
      throw new UnnamedTableRead(
        `cached read "${key}" inside "${outer.key}" reads ${missing.join(', ')}, which "${outer.key}" does not name`,
      );
  }
  const inside = reads ? { key, reads: new Set(reads) } : null;
  return () => current.run(inside, compute);
}

/** The tables a statement names, common table expressions aside (raw SQL: those after FROM and JOIN). */
export function tablesOf(node: OperationNode): Set<string> {
  const found = new Set<string>();
  const named = new Set<string>();
  const walk = (value: unknown): void => {
    if (Array.isArray(value)) {
      for (const v of value) walk(v);
      return;
    }
    if (value === null || typeof value !== 'object') return;
    // A column's table ("t"."c") names a table or an alias already in the FROM clause.
    if ((value as { kind?: string }).kind === 'ReferenceNode') return;
    const n = value as {
      kind?: string;
      table?: { identifier?: { name?: string }; table?: { identifier?: { name?: string } } };
      sqlFragments?: readonly string[];
    };
    if (n.kind === 'TableNode' && n.table?.identifier?.name) found.add(n.table.identifier.name);
    if (n.kind === 'CommonTableExpressionNameNode' && n.table?.table?.identifier?.name)
      named.add(n.table.table.identifier.name);
    if (n.kind === 'RawNode' && n.sqlFragments) {
      for (const m of n.sqlFragments.join(' ? ').matchAll(/\b(?:from|join)\s+"?([A-Za-z_]\w*)\b"?(?!\s*\()/gi))
        found.add(m[1]!);
    }
    for (const v of Object.values(value)) if (v !== null && typeof v === 'object') walk(v);
  };
  walk(node);
  for (const cte of named) found.delete(cte);
  return found;
}

/** Called for every statement a counted handle runs: inside an audited computation, it must read only named tables. */
export function auditStatement(node: RootOperationNode): void {
  if (!auditing) return;
  const inside = current.getStore();
  if (!inside) return;
  const unnamed = [...tablesOf(node)].filter((t) => t !== 'data_version' && !inside.reads.has(t));
  if (unnamed.length > 0)
    throw new UnnamedTableRead(`cached read "${inside.key}" reads ${unnamed.join(', ')}, which it does not name`);
}
