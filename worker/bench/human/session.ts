import type { Page } from 'puppeteer-core';
import { sleep } from '../stats';
import type { Recorded, RecorderWindow } from './events';
import type { Trial } from './trials';

/**
 * One side of the comparison: the same trials, text and scrolls on a recording tab, driven by
 * a `Driver`. The puppeteer page is only used to place targets, mark trials and read the log
 * back; every input event comes from the driver.
 */

export interface Driver {
  /** Move to the trial's target; for click kinds, press on it. */
  act(trial: Trial): Promise<void>;
  /** Focus `selector` by clicking it, then type `text`. */
  type(selector: string, text: string): Promise<void>;
  /** Scroll by `distance` px (negative is up). */
  scroll(distance: number): Promise<void>;
}

export type Phase = 'mouse' | 'typing' | 'scroll';

export interface Recording {
  log: Recorded[];
  /** The input's value after each typing call. */
  values: string[];
  /** Why a phase has no figures (an endpoint missing, a failed call). */
  errors: Partial<Record<Phase, string>>;
  seconds: Record<Phase, number>;
  /** Marks taken while the tab was not visible (its timing would not be a foreground tab's). */
  hiddenMarks: number;
}

export interface Script {
  trials: Trial[];
  text: string;
  /** How many times the text is typed, each into an emptied input (one call each). */
  typingRuns: number;
  scrolls: number[];
  /** The phases to run (all when absent); the others report n/a. */
  phases?: readonly Phase[];
}

/** The page may keep scrolling after a call returns (docs/api.md, Primitives: scroll-page). */
const SCROLL_SETTLE_MS = 800;

const mark = (page: Page, label: string): Promise<void> =>
  page.evaluate((l) => (window as unknown as RecorderWindow).__mark(l), label);

export async function recordSession(
  page: Page,
  driver: Driver,
  script: Script,
  progress: (m: string) => void,
): Promise<Recording> {
  const errors: Partial<Record<Phase, string>> = {};
  const seconds: Record<Phase, number> = { mouse: 0, typing: 0, scroll: 0 };
  await page.bringToFront();
  const phase = async (name: Phase, work: () => Promise<void>): Promise<void> => {
    if (script.phases && !script.phases.includes(name)) {
      errors[name] = 'n/a (not run: HUMAN_PHASES)';
      return;
    }
    const started = performance.now();
    try {
      await work();
    } catch (err) {
      errors[name] = err instanceof Error ? err.message : String(err);
      progress(`${name} failed: ${errors[name]}`);
    }
    seconds[name] = (performance.now() - started) / 1000;
  };
  await phase('mouse', async () => {
    for (const [i, t] of script.trials.entries()) {
      await page.evaluate(
        (x, y, w, label, d) => (window as unknown as RecorderWindow).__place(x, y, w, label, d),
        t.x,
        t.y,
        t.w,
        `${t.label}:${t.kind}`,
        t.d,
      );
      await driver.act(t);
      if (i % 20 === 19) progress(`${i + 1}/${script.trials.length} moves`);
    }
  });
  const values: string[] = [];
  const field = (): Promise<string> =>
    page.evaluate(() => (document.getElementById('text') as HTMLInputElement).value);
  await phase('typing', async () => {
    for (let run = 0; run < script.typingRuns; run++) {
      await page.evaluate(() => {
        (document.getElementById('text') as HTMLInputElement).value = '';
      });
      await mark(page, `typing:${run}`);
      await driver.type('#text', script.text);
      values.push(await field());
      progress(`typing ${run + 1}/${script.typingRuns}`);
    }
  });
  await phase('scroll', async () => {
    for (const d of script.scrolls) {
      await mark(page, `scroll:${d}`);
      await driver.scroll(d);
      await sleep(SCROLL_SETTLE_MS);
    }
  });
  await mark(page, 'end');
  const log = await page.evaluate(() => (window as unknown as RecorderWindow).__events);
  const hiddenMarks = log.filter((e) => e.type === 'mark' && !e.visible).length;
  return { log, values, errors, seconds, hiddenMarks };
}
