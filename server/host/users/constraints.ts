import { z } from 'zod';

/**
 * Permission constraints (contract 3.1): `null` (no narrowing), one constraint object (every
 * condition holds) or a non-empty list of them (any one holds). A condition is
 * `{"field": value}` or `{"field__in": [values]}`; `"$user"` stands for the caller's id.
 * Fields are API field names, dotted for nested ones (`branch.id`).
 */
const FIELD = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$/;

const scalar = z.union([z.string(), z.number(), z.boolean(), z.null()]);

export const constraintObject = z.record(z.string(), z.unknown()).superRefine((obj, ctx) => {
  const keys = Object.keys(obj);
  if (keys.length === 0) {
    ctx.addIssue({ code: 'custom', message: 'A constraint object needs at least one condition.' });
  }
  for (const key of keys) {
    const isIn = key.endsWith('__in');
    const field = isIn ? key.slice(0, -4) : key;
    if (!FIELD.test(field) || field.includes('__')) {
      ctx.addIssue({
        code: 'custom',
        path: [key],
        message: `"${key}" is not a condition: use "field" or "field__in".`,
      });
      continue;
    }
    const value = obj[key];
    if (isIn) {
      if (!Array.isArray(value) || !value.every((v) => scalar.safeParse(v).success)) {
        ctx.addIssue({ code: 'custom', path: [key], message: `"${key}" needs a list of values.` });
      }
    } else if (!scalar.safeParse(value).success) {
      ctx.addIssue({
        code: 'custom',
        path: [key],
        message: `"${key}" needs a single value (a string, number, boolean or null).`,
      });
    }
  }
});

export const constraints = z.union(
  [
    z.null(),
    constraintObject,
    z
      .array(constraintObject)
      .min(1, { error: 'Give at least one constraint object, or null for no constraints.' })
      .max(100),
  ],
  { error: 'Constraints are null, an object of conditions, or a list of such objects.' },
);

export type Constraints = z.infer<typeof constraints>;
