import type { Frame, Page } from 'puppeteer-core';

/**
 * What goes wrong for `page` from now on, as lines for an error message: requests that failed,
 * answers of 400 and above, and console errors (a module that did not load is one).
 */
export function pageProblems(page: Page): string[] {
  const problems: string[] = [];
  page.on('requestfailed', (r) => problems.push(`${r.url()}: ${r.failure()?.errorText ?? ''}`));
  page.on('response', (r) => {
    if (r.status() >= 400) problems.push(`${r.url()}: ${r.status()}`);
  });
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console: ${m.text()}`);
  });
  return problems;
}

/**
 * Waits until the live view in `frame` says it is connected (its status `connected`, "Live").
 * When it does not within `timeoutMs`, the error says what the viewer showed instead (its
 * status and its message to the person) and the `problems` pageProblems collected.
 */
export async function viewerLive(
  frame: Page | Frame,
  timeoutMs: number,
  problems: string[] = [],
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
    const seen = problems.join('; ') || 'nothing failed';
    throw new Error(
      `the live view was not connected within ${timeoutMs} ms: it showed ${shown}; on the way: ${seen}`,
      { cause: err },
    );
  }
}
