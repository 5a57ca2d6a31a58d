// Read by shape, not `instanceof Error`: an error made in another realm (a VM context, a test
// runner's sandbox reading Node's own errors) is no instance of this realm's Error.

/** What a thrown value says: an error's message, anything else as text. */
export function errorMessage(err: unknown): string {
  return typeof err === 'object' &&
    err !== null &&
    'message' in err &&
    typeof err.message === 'string'
    ? err.message
    : String(err);
}

/** The system error code of a failed call (`ENOENT`, `EADDRINUSE`), or undefined. */
export function errnoCode(err: unknown): string | undefined {
  return typeof err === 'object' && err !== null && 'code' in err && typeof err.code === 'string'
    ? err.code
    : undefined;
}
