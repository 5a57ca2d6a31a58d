import type { Frame, Page } from 'puppeteer-core';
import type { PageProblems } from './page-problems';

/**
 * How long a test gives the live view to connect: two of its tries (it gives up a call after
 * 20 s, worker/panel/vnc/worker-call.js, and asks again 4 s later) and the connection itself. A
 * machine under load left a first call unanswered in CI; the second try connected.
 */
export const VIEWER_CONNECT_MS = 60_000;

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
