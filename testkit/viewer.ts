import type { Frame, Page } from 'puppeteer-core';
import type { PageProblems } from './page-problems';

/**
 * Waits until the live view in `frame` says it is connected (its status `connected`, "Live").
 * When it does not within `timeoutMs`, the error says what the viewer showed instead (its
 * status and its message to the person) and the `problems` pageProblems collected.
 */
export async function viewerLive(
  frame: Page | Frame,
  timeoutMs: number,
  problems?: PageProblems,
): Promise<void> {
  try {
    await frame.waitForFunction(
      () => document.getElementById('status')?.dataset.state === 'connected',
      { timeout: timeoutMs },
    );
  } catch (err) {
    const shown = await frame
      .evaluate(() => {
        const text = (id: string): string => document.getElementById(id)?.textContent ?? '';
        const state = document.getElementById('status')?.dataset.state ?? 'none';
        return `status ${state} "${text('status')}", message "${text('message')}"`;
      })
      .catch((e: unknown) => `nothing readable (${String(e)})`);
    const seen = problems?.lines().join('; ') || 'nothing failed';
    throw new Error(
      `the live view was not connected within ${timeoutMs} ms: it showed ${shown}; on the way: ${seen}`,
      { cause: err },
    );
  }
}
