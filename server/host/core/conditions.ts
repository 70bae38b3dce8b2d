import { RE2JS } from 're2js';
/**
 * Condition sets (contract 4.2), shared by event rules and change-control policies:
 * a leaf `{attr, op, value, negate}` or `{and: [...]}` / `{or: [...]}`, nested freely.
 */
export interface ConditionLeaf {
  attr: string;
  op?: string;
  value?: unknown;
  negate?: boolean;
}
export type ConditionSet = ConditionLeaf | { and: ConditionSet[] } | { or: ConditionSet[] };

/** What a condition reads: the values a plain attribute has, one named side, and whether it moved. */
export interface ConditionSubject {
  /** Values of a plain attribute, one per side the condition state reads (absent sides left out). */
  values(attr: string): unknown[];
  /** The value on one named side (`snapshots.prechange.<attr>`). */
  side(side: 'prechange' | 'postchange', attr: string): unknown;
  /** Whether the attribute differs between the two sides. */
  changed(attr: string): boolean;
}

export function readPath(obj: unknown, path: string): unknown {
  let value = obj;
  for (const part of path.split('.')) {
    // Own keys only: an attribute named `constructor` is data, never Object's.
    if (value === null || typeof value !== 'object' || !Object.hasOwn(value, part)) return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

export function sameJson(a: unknown, b: unknown): boolean {
  const x = a ?? null;
  const y = b ?? null;
  // Plain values compare directly; objects and lists as JSON.
  if ((x === null || typeof x !== 'object') && (y === null || typeof y !== 'object')) return x === y;
  return JSON.stringify(x) === JSON.stringify(y);
}

function compare(actual: unknown, expected: unknown): number | null {
  if (typeof actual === 'number' && typeof expected === 'number') return actual - expected;
  if (typeof actual === 'string' && typeof expected === 'string')
    return actual < expected ? -1 : actual > expected ? 1 : 0;
  return null;
}

export function testOp(op: string, actual: unknown, expected: unknown): boolean {
  switch (op) {
    case 'eq':
      return sameJson(actual, expected);
    case 'gt': {
      const c = compare(actual, expected);
      return c !== null && c > 0;
    }
    case 'gte': {
      const c = compare(actual, expected);
      return c !== null && c >= 0;
    }
    case 'lt': {
      const c = compare(actual, expected);
      return c !== null && c < 0;
    }
    case 'lte': {
      const c = compare(actual, expected);
      return c !== null && c <= 0;
    }
    case 'in':
      return Array.isArray(expected) && expected.some((e) => sameJson(actual, e));
    case 'contains':
      if (typeof actual === 'string') return typeof expected === 'string' && actual.includes(expected);
      if (Array.isArray(actual)) return actual.some((a) => sameJson(a, expected));
      return false;
    case 'regex': {
      if (typeof expected !== 'string' || actual === undefined || actual === null) return false;
      const re = conditionRegExp(expected);
      return re !== null && re.test(String(actual));
    }
    default:
      return false;
  }
}

const SNAPSHOT = /^snapshots\.(prechange|postchange)\.(.+)$/;

function evaluateLeaf(leaf: ConditionLeaf, subject: ConditionSubject): boolean {
  const op = leaf.op ?? 'eq';
  let result: boolean;
  if (op === 'changed' || op === 'unchanged') {
    const snap = SNAPSHOT.exec(leaf.attr);
    const moved = subject.changed(snap ? snap[2]! : leaf.attr);
    result = op === 'changed' ? moved : !moved;
  } else {
    const snap = SNAPSHOT.exec(leaf.attr);
    if (snap) {
      result = testOp(op, subject.side(snap[1] as 'prechange' | 'postchange', snap[2]!), leaf.value);
    } else {
      result = subject.values(leaf.attr).some((v) => testOp(op, v, leaf.value));
    }
  }
  return leaf.negate ? !result : result;
}

export function evaluateConditionSet(set: ConditionSet, subject: ConditionSubject): boolean {
  if ('and' in set) return set.and.every((s) => evaluateConditionSet(s, subject));
  if ('or' in set) return set.or.some((s) => evaluateConditionSet(s, subject));
  return evaluateLeaf(set, subject);
}

/** Evaluates a condition set against one plain object (event-rule conditions read the event's data). */
export function evaluateConditions(set: ConditionSet, data: Record<string, unknown>): boolean {
  return evaluateConditionSet(set, {
    values: (attr) => [readPath(data, attr)],
    side: (_side, attr) => readPath(data, attr),
    changed: () => false,
  });
}

export const MAX_REGEX_LENGTH = 500;

/** A condition's expression compiled for a linear-time engine: matching takes time linear in the input. */
export interface LinearPattern {
  test(input: string): boolean;
}

// Conditions run on every write and read of a request: their expressions are matched by RE2's
// algorithm (re2js, in plain JavaScript), so no input can make one backtrack for exponential time.
const compiledExpressions = new Map<string, LinearPattern | null>();

/** A condition's expression compiled for the linear-time engine, or null when it cannot be. */
export function conditionRegExp(expression: string): LinearPattern | null {
  let re = compiledExpressions.get(expression);
  if (re === undefined) {
    try {
      re = expression.length > MAX_REGEX_LENGTH ? null : RE2JS.compile(expression);
    } catch {
      re = null;
    }
    if (compiledExpressions.size >= 1000) compiledExpressions.delete(compiledExpressions.keys().next().value!);
    compiledExpressions.set(expression, re);
  }
  return re;
}

/** Why a `regex` condition's expression is refused, or null. */
export function regexProblem(expression: string): string | null {
  if (expression.length > MAX_REGEX_LENGTH) return `is too long (at most ${MAX_REGEX_LENGTH} characters)`;
  try {
    new RegExp(expression);
  } catch {
    return 'is not a valid regular expression';
  }
  if (!conditionRegExp(expression)) {
    return 'cannot be matched in linear time: backreferences, lookaround (\\1, (?=...), (?<=...)) and repeat counts over 1000 are not supported';
  }
  return null;
}

/** Checks the shape and operators of a condition set; returns the first problem or null. */
export function conditionSetProblem(set: unknown, ops: readonly string[], path = 'conditions'): string | null {
  if (set === null || typeof set !== 'object' || Array.isArray(set)) return `${path} must be an object`;
  const obj = set as Record<string, unknown>;
  for (const key of ['and', 'or'] as const) {
    if (key in obj) {
      if (Object.keys(obj).length !== 1) return `${path}: "${key}" cannot be combined with other keys`;
      const list = obj[key];
      if (!Array.isArray(list) || list.length === 0) return `${path}.${key} must be a non-empty list`;
      for (let i = 0; i < list.length; i++) {
        const p = conditionSetProblem(list[i], ops, `${path}.${key}[${i}]`);
        if (p) return p;
      }
      return null;
    }
  }
  if (typeof obj.attr !== 'string' || obj.attr === '') return `${path}.attr must be a non-empty string`;
  const op = obj.op ?? 'eq';
  if (typeof op !== 'string' || !ops.includes(op)) return `${path}.op must be one of ${ops.join(', ')}`;
  if (op === 'in' && !Array.isArray(obj.value)) return `${path}.value must be a list for "in"`;
  if (op === 'regex') {
    if (typeof obj.value !== 'string') return `${path}.value must be a string for "regex"`;
    const problem = regexProblem(obj.value);
    if (problem) return `${path}.value ${problem}`;
  }
  if (obj.negate !== undefined && typeof obj.negate !== 'boolean') return `${path}.negate must be true or false`;
  const unknown = Object.keys(obj).filter((k) => !['attr', 'op', 'value', 'negate'].includes(k));
  if (unknown.length > 0) return `${path}: unknown key "${unknown[0]}"`;
  return null;
}
