import type { PluginContext } from '@persona-browser/plugin-sdk';
import { SiteError, clickOnScreen } from '@persona-browser/plugin-sdk';
import { SELECTORS } from './site';

/** A link's new document: the click starts it, the site may answer with a redirect. */
const NAVIGATION_WAIT_MS = 15_000;
/** A native drop-down list opens a moment after the click, and a person reads it. */
const LIST_OPEN_MS = [250, 600] as const;
const ATTEMPTS = 3;

/** Clicks a link or button that loads a new document, and waits for that document. */
export async function clickToNavigate(
  ctx: PluginContext,
  selector: string,
  what: string,
): Promise<void> {
  await ctx.page.navigationAfter(() => clickOnScreen(ctx, selector, what), NAVIGATION_WAIT_MS);
}

const norm = (s: string): string => s.replace(/\s+/g, ' ').trim().toLowerCase();
export const sameLabel = (a: string | null | undefined, b: string): boolean =>
  a != null && norm(a) === norm(b);

/** The shortest start of `label` that no other option starts with (what a person types). */
export function uniquePrefix(label: string, options: readonly string[]): string {
  const others = options.filter((o) => !sameLabel(o, label)).map(norm);
  for (let n = 1; n <= label.length; n += 1) {
    const start = norm(label.slice(0, n));
    if (!label.slice(0, n).endsWith(' ') && !others.some((o) => o.startsWith(start))) {
      return label.slice(0, n);
    }
  }
  return label;
}

/**
 * Picks `label` in the period selector (a native drop-down) as a person does with the
 * keyboard: a click opens the list, the start of the label jumps to the option, Enter takes
 * it. A slip of the fingers can land on another option: the choice is read back and tried again.
 */
export async function chooseOption(
  ctx: PluginContext,
  label: string,
  options: readonly string[],
  selectedNow: () => Promise<string | null>,
): Promise<void> {
  const prefix = uniquePrefix(label, options);
  for (let attempt = 1; attempt <= ATTEMPTS; attempt += 1) {
    await clickOnScreen(ctx, SELECTORS.periodSelect, 'the period selector');
    const [min, max] = LIST_OPEN_MS;
    await ctx.sleep(min + ctx.random() * (max - min));
    await ctx.gestures.type(prefix);
    await ctx.gestures.pressEnter();
    if (sameLabel(await selectedNow(), label)) return;
  }
  throw new SiteError(
    `"${label}" chosen in the period selector`,
    `"${(await selectedNow()) ?? 'nothing'}" after ${ATTEMPTS} tries at ${ctx.page.url()}`,
  );
}
