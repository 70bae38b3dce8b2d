import type { z } from 'zod';
import { ValidationError, type FieldErrors } from '../core/errors';

/** Zod issues as the API's field errors: `{field: [messages]}` (`non_field_errors` for the root). */
export function zodFieldErrors(error: z.ZodError): FieldErrors {
  // A null-prototype record: a field named `constructor` or `toString` is plain data here.
  const fields: FieldErrors = Object.create(null) as FieldErrors;
  for (const issue of error.issues) {
    const key = issue.path.length > 0 ? issue.path.map(String).join('.') : 'non_field_errors';
    let message = issue.message;
    if (issue.code === 'unrecognized_keys') {
      // A key nested in an object is named by its full path (`conditions.extra`).
      const prefix = issue.path.length > 0 ? `${issue.path.map(String).join('.')}.` : '';
      for (const k of issue.keys) (fields[`${prefix}${k}`] ??= []).push('Unknown field.');
      continue;
    }
    if (issue.code === 'invalid_type' && /received undefined/.test(issue.message)) message = 'This field is required.';
    (fields[key] ??= []).push(message);
  }
  return fields;
}

/** Parses input with a schema, turning failures into a 400 with field errors. */
export function validate<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const result = schema.safeParse(input);
  if (!result.success) {
    const fields = zodFieldErrors(result.error);
    throw new ValidationError(
      Object.entries(fields)
        .map(([k, v]) => `${k}: ${v.join(' ')}`)
        .join('; '),
      fields,
    );
  }
  return result.data;
}
