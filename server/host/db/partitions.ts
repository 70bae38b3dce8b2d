import type { OperationNode, RootOperationNode } from 'kysely';

/**
 * Table versions finer than a table: a partitioned table (registered with the column that
 * partitions it, e.g. a request's checks by `change_request_id`) has, besides its table version,
 * a version per bucket of that column's values (`table#bucket`, `PARTITION_BUCKETS` of them, and
 * `table#-` for null). A write statement says which rows it writes by its own text: an insert by
 * the column's values, an update or a delete by a condition `column = value` (or `column in
 * (…)`) among the ANDs of its WHERE. A committed transaction moves the table's version, the
 * buckets its writes said, and `table#told` when every write of the table in it said its rows.
 * So the writes that did not say (a condition on another column, an upsert whose conflict may
 * be another partition's row, or a process that does not know the partitions: an older version
 * of the service during an upgrade) are the table's version less `table#told`, which every
 * reader of a bucket reads too: such a write is never missed, it only moves every bucket (the
 * same rule as the data version's rows 1 and 2). So an answer computed from one request's
 * checks names `cc_merge_checks#<its bucket>` (`partitionName`) and is kept across a check report
 * on most other requests, on any instance (the versions are rows of the database).
 *
 * Rows deleted or changed by a foreign key's cascade are not seen by the statement that caused
 * them: a reader names the parent's table (or its partition) too.
 */
export const PARTITION_BUCKETS = 16;

/** Partitioned tables and the column that partitions each. */
const partitionColumns = new Map<string, string>();

/** Partitions `table` by `column` (every process of the service registers the same ones at start). */
export function partitionTable(table: string, column: string): void {
  const known = partitionColumns.get(table);
  if (known !== undefined && known !== column) throw new Error(`table ${table} is already partitioned by ${known}`);
  partitionColumns.set(table, column);
}

/** The column partitioning `table`, if it is partitioned. */
export function partitionColumnOf(table: string): string | undefined {
  return partitionColumns.get(table);
}

/** The name under which a transaction counts its writes of `table` that did not say their rows (never a version's row). */
export function unknownPartition(table: string): string {
  return `${table}#*`;
}

/** The version moved with the table's by the transactions whose every write of it said its rows. */
export function toldPartitions(table: string): string {
  return `${table}#told`;
}

function bucketOf(value: unknown): string {
  if (value === null || value === undefined) return '-';
  if (typeof value === 'number' && Number.isSafeInteger(value))
    return String(((value % PARTITION_BUCKETS) + PARTITION_BUCKETS) % PARTITION_BUCKETS);
  const text = String(value);
  if (/^-?\d+$/.test(text) && Number.isSafeInteger(Number(text))) return bucketOf(Number(text));
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return String(h % PARTITION_BUCKETS);
}

/** The name an answer computed from the rows of `table` whose partitioning column is `value` gives for them. */
export function partitionName(table: string, value: unknown): string {
  if (!partitionColumns.has(table)) throw new Error(`table ${table} is not partitioned`);
  return `${table}#${bucketOf(value)}`;
}

/** For a partition's name (`table#bucket`), its table; otherwise undefined. */
export function partitionedTableOf(name: string): string | undefined {
  const at = name.lastIndexOf('#');
  return at > 0 ? name.slice(0, at) : undefined;
}

// ---- What a statement says of its rows ------------------------------------------------------

type Node = OperationNode & Record<string, any>;

function nameOfTable(node: Node | undefined): { table: string; alias: string | null } | null {
  if (!node) return null;
  if (node.kind === 'TableNode') return { table: node.table.identifier.name, alias: null };
  if (node.kind === 'AliasNode' && node.node?.kind === 'TableNode')
    return { table: node.node.table.identifier.name, alias: node.alias?.name ?? null };
  return null;
}

/** A plain value (a parameter), or NOT_PLAIN. */
const NOT_PLAIN = Symbol('not plain');
function plainValue(node: Node | undefined, resolve: Resolve = same): unknown {
  if (node?.kind === 'ValueNode') return resolve(node.value);
  return NOT_PLAIN;
}

/** What a parameter of a statement stands for (a statement compiled once holds placeholders: `compiledSelect`). */
export type Resolve = (value: unknown) => unknown;
const same: Resolve = (value) => value;

/** Whether `node` refers to `column` of the table (named `qualifiers`, or unqualified). */
function isColumn(node: Node | undefined, column: string, qualifiers: ReadonlySet<string>): boolean {
  if (!node) return false;
  if (node.kind === 'ColumnNode') return node.column.name === column;
  if (node.kind !== 'ReferenceNode' || node.column?.kind !== 'ColumnNode' || node.column.column.name !== column)
    return false;
  return node.table === undefined || qualifiers.has(node.table.table.identifier.name);
}

/** The values a list of values holds, or null when one is not plain. */
function listValues(node: Node | undefined, resolve: Resolve): unknown[] | null {
  if (node?.kind === 'PrimitiveValueListNode') return node.values.map(resolve);
  if (node?.kind === 'ValueListNode') {
    const out: unknown[] = [];
    for (const v of node.values) {
      const value = plainValue(v, resolve);
      if (value === NOT_PLAIN) return null;
      out.push(value);
    }
    return out;
  }
  if (node?.kind === 'ParensNode') return listValues(node.node, resolve);
  return null;
}

/** The conditions ANDed at the top of a WHERE. */
function conjuncts(node: Node | undefined, out: Node[] = []): Node[] {
  if (!node) return out;
  if (node.kind === 'WhereNode') return conjuncts(node.where, out);
  if (node.kind === 'ParensNode') return conjuncts(node.node, out);
  if (node.kind === 'AndNode') {
    conjuncts(node.left, out);
    conjuncts(node.right, out);
    return out;
  }
  out.push(node);
  return out;
}

/** The values of `column` a WHERE restricts the rows to (one ANDed `=` or `in`), or null when it does not. */
export function restrictedValues(
  where: OperationNode | undefined,
  column: string,
  qualifiers: ReadonlySet<string>,
  resolve: Resolve = same,
): unknown[] | null {
  for (const c of conjuncts(where as Node | undefined)) {
    if (c.kind !== 'BinaryOperationNode' || c.operator?.kind !== 'OperatorNode') continue;
    const op = c.operator.operator;
    if (!isColumn(c.leftOperand, column, qualifiers)) continue;
    if (op === '=' || op === '==' || op === 'is') {
      const value = plainValue(c.rightOperand, resolve);
      if (value !== NOT_PLAIN && (op !== 'is' || value === null)) return [value];
    } else if (op === 'in') {
      const values = listValues(c.rightOperand, resolve);
      if (values) return values;
    }
  }
  return null;
}

function qualifiersOf(named: { table: string; alias: string | null }): Set<string> {
  return new Set(named.alias ? [named.table, named.alias] : [named.table]);
}

/**
 * The partitions a write statement writes: for a partitioned table, its partitions' names, or
 * `table#*` when the statement does not say its rows; for any other statement, none.
 */
export function writtenPartitions(node: RootOperationNode, resolve: Resolve = same): string[] {
  const n = node as Node;
  let named: { table: string; alias: string | null } | null = null;
  if (n.kind === 'InsertQueryNode') named = nameOfTable(n.into);
  else if (n.kind === 'UpdateQueryNode') named = nameOfTable(n.table);
  else if (n.kind === 'DeleteQueryNode' && n.from.froms.length === 1) named = nameOfTable(n.from.froms[0]);
  if (!named) return [];
  const column = partitionColumns.get(named.table);
  if (column === undefined) return [];
  const values = writtenValues(n, column, qualifiersOf(named), resolve);
  if (!values) return [unknownPartition(named.table)];
  return [...new Set(values.map((v) => partitionName(named!.table, v)))];
}

function writtenValues(n: Node, column: string, qualifiers: ReadonlySet<string>, resolve: Resolve): unknown[] | null {
  if (n.kind === 'InsertQueryNode') {
    if (n.replace || n.onDuplicateKey || n.orAction) return null;
    // An upsert updates the row it conflicts with: the same partition only if the conflict is on the column.
    if (
      n.onConflict &&
      !n.onConflict.doNothing &&
      !(n.onConflict.columns ?? []).some((c: Node) => c.column.name === column)
    )
      return null;
    const at = (n.columns ?? []).findIndex((c: Node) => c.column.name === column);
    if (at < 0 || n.values?.kind !== 'ValuesNode') return null;
    const out: unknown[] = [];
    for (const row of n.values.values as Node[]) {
      if (row.kind === 'PrimitiveValueListNode') out.push(resolve(row.values[at]));
      else if (row.kind === 'ValueListNode') {
        const value = plainValue(row.values[at], resolve);
        if (value === NOT_PLAIN) return null;
        out.push(value);
      } else return null;
    }
    return out;
  }
  const values = restrictedValues(n.where, column, qualifiers, resolve);
  if (!values) return null;
  if (n.kind === 'UpdateQueryNode') {
    for (const u of (n.updates ?? []) as Node[]) {
      if (!isColumn(u.column, column, qualifiers)) continue;
      // A row moved to another partition: that one is written too.
      const value = plainValue(u.value, resolve);
      if (value === NOT_PLAIN) return null;
      values.push(value);
    }
  }
  return values;
}

/**
 * For the read audit: the partitions of `table` a select reads, or null when it does not say
 * (the table must be its only FROM's table, read once, restricted by an ANDed `column = value`
 * or `column in (…)`; raw SQL: read once, with no OR, `column = ?` with a plain parameter).
 */
export function readPartitions(node: OperationNode, table: string, resolve: Resolve = same): string[] | null {
  const column = partitionColumns.get(table);
  if (column === undefined) return null;
  const n = node as Node;
  if (n.kind === 'SelectQueryNode') {
    if (occurrences(n, table) !== 1) return null;
    const from = (n.from?.froms ?? [])
      .map((f: Node) => nameOfTable(f))
      .find((f: { table: string } | null) => f?.table === table);
    if (!from) return null;
    const values = restrictedValues(n.where, column, qualifiersOf(from), resolve);
    return values && [...new Set(values.map((v) => partitionName(table, v)))];
  }
  if (n.kind === 'RawNode') {
    const fragments: readonly string[] = n.sqlFragments;
    const text = fragments.join(' ? ');
    if (/\bor\b/i.test(text) || occurrences(n, table) !== 1) return null;
    const at = new RegExp(`(?:\\b${table}\\.|[^.\\w"]|^)"?${column}"?\\s*=\\s*$`, 'i');
    for (let i = 0; i < fragments.length - 1; i++) {
      if (!at.test(fragments[i]!)) continue;
      const value = plainValue(n.parameters[i], resolve);
      if (value !== NOT_PLAIN) return [partitionName(table, value)];
    }
    return null;
  }
  return null;
}

/** How many times a statement names `table`. */
function occurrences(node: unknown, table: string): number {
  if (Array.isArray(node)) return node.reduce((sum: number, v) => sum + occurrences(v, table), 0);
  if (node === null || typeof node !== 'object') return 0;
  const n = node as Node;
  if (n.kind === 'ReferenceNode') return 0;
  let count = n.kind === 'TableNode' && n.table?.identifier?.name === table ? 1 : 0;
  if (n.kind === 'RawNode')
    count += ((n.sqlFragments as string[]).join(' ? ').match(new RegExp(`\\b${table}\\b`, 'g')) ?? []).length;
  for (const v of Object.values(n)) if (v !== null && typeof v === 'object') count += occurrences(v, table);
  return count;
}
