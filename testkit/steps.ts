/**
 * Runs one step of a longer test (a sequence that is one test because its steps share one
 * browser or container): a failure names the step it failed in.
 */
export async function step<T>(name: string, body: () => Promise<T>): Promise<T> {
  try {
    return await body();
  } catch (e) {
    if (e instanceof Error) e.message = `[step ${name}] ${e.message}`;
    throw e;
  }
}
