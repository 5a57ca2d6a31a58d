import type { HTTPRequest, Page } from 'puppeteer-core';

/** What went wrong for a page so far, as lines for an error message. */
export interface PageProblems {
  lines(): string[];
}

/**
 * Watches `page` from now on: requests that failed, answers of 400 and above, console errors (a
 * module that did not load is one), uncaught script errors, and the requests still unanswered
 * when `lines()` is read.
 */
export function pageProblems(page: Page): PageProblems {
  const problems: string[] = [];
  const pending = new Map<HTTPRequest, number>();
  page.on('request', (r) => pending.set(r, Date.now()));
  page.on('requestfinished', (r) => pending.delete(r));
  page.on('requestfailed', (r) => {
    pending.delete(r);
    problems.push(`${r.method()} ${r.url()}: ${r.failure()?.errorText ?? ''}`);
  });
  page.on('response', (r) => {
    if (r.status() >= 400) problems.push(`${r.request().method()} ${r.url()}: ${r.status()}`);
  });
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console: ${m.text()}`);
  });
  page.on('pageerror', (err) => problems.push(`script error: ${String(err)}`));
  return {
    lines: () => [
      ...problems,
      ...[...pending].map(
        ([r, at]) => `${r.method()} ${r.url()}: no answer after ${Date.now() - at} ms`,
      ),
    ],
  };
}
