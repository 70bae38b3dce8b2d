/**
 * A value the types forbid, given where they forbid it: for tests of the runtime checks that
 * refuse what a caller without types (a plugin in JavaScript, a configuration file) may send.
 */
export function unchecked<T>(value: unknown): T {
  return value as T;
}
