/**
 * The property `key` of a value parsed from JSON (or any value of unknown shape): undefined when
 * the value is not an object or has no such property. Callers then check the property's type.
 */
export function prop(value: unknown, key: string): unknown {
  if (typeof value !== 'object' || value === null || !(key in value)) return undefined;
  const found: unknown = Reflect.get(value, key);
  return found;
}
