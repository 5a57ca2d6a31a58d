/** Whether `value` is an object whose fields can be read (parsed JSON, an error's extras). */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}
