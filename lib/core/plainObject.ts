/**
 * Shapes of parsed records, for the hand-written quick checks of valid rows that run before a
 * schema (a battery's "quick row"): they take only what the schema would take, and an object that
 * is not plain, or has a key the schema does not know, is left to the schema to name.
 */

/** An object made by a JSON parser or a literal: its prototype is Object's, or none. */
export function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (v === null || typeof v !== 'object') return false;
  const proto = Object.getPrototypeOf(v) as unknown;
  return proto === Object.prototype || proto === null;
}

/** Every key of `o` is one of `keys` (a key such as "__proto__" that JSON.parse made own included). */
export function hasOnlyKeys(o: Record<string, unknown>, keys: ReadonlySet<string>): boolean {
  for (const k in o) if (!keys.has(k)) return false;
  return true;
}
