import type { PluginContext } from '@persona-browser/plugin-sdk';
import { definePlugin, SiteError, clickOnScreen } from '@persona-browser/plugin-sdk';
import type { Period, PeriodPreset } from '../../italian';
import { isoParts, resolvePeriod, toItalianDate, todayIso } from '../../italian';
import { fillField } from '../../human';
import { clickToPage } from '../human';
import { shownPeriod } from '../movements';
import { chainFields, readPage, requireState } from '../page-state';
import { MAX_MONTHS, QUICK_LINKS, SELECTORS } from '../site';

interface Params {
  preset: string;
  from?: string;
  to?: string;
}

const DEFAULT_PRESET = 'last_30_days';

/** The period asked for, or what is wrong with the parameters. */
function periodOf(p: Params): Period | string {
  const dates = Boolean(p.from || p.to);
  // With dates, the form's default preset means "no preset".
  const preset = dates && p.preset === DEFAULT_PRESET ? undefined : p.preset;
  const period = resolvePeriod({ preset, from: p.from, to: p.to }, todayIso());
  if (typeof period === 'string') return period;
  const { y, m, d } = isoParts(period.from);
  const limit = new Date(Date.UTC(y, m - 1 + MAX_MONTHS, d)).toISOString().slice(0, 10);
  if (period.to >= limit) {
    return `bank-b shows at most ${MAX_MONTHS} months at a time: ${period.from} to ${period.to} is longer`;
  }
  return period;
}

/* In the isolated world: a selector that matches exactly the link whose text is `label`. */
function linkSelectorInPage(selector: string, label: string): string | null {
  const links = Array.from(document.querySelectorAll(selector));
  const link = links.find((a) => (a.textContent ?? '').trim().toLowerCase() === label);
  if (!link || !link.parentElement) return null;
  const same = Array.from(link.parentElement.children).filter((e) => e.tagName === link.tagName);
  const exact = `${selector}:nth-of-type(${same.indexOf(link) + 1})`;
  const matches = document.querySelectorAll(exact);
  return matches.length === 1 && matches[0] === link ? exact : null;
}

/** The quick link that means `preset`, when the page has one: its selector. */
function quickLinkOf(ctx: PluginContext, preset: PeriodPreset | null): Promise<string | null> {
  const label = preset ? QUICK_LINKS[preset] : undefined;
  if (!label) return Promise.resolve(null);
  return ctx.page.evaluate(linkSelectorInPage, SELECTORS.quickLink, label.toLowerCase());
}

export default definePlugin<Params>({
  validate: (p) => {
    const period = periodOf(p);
    return typeof period === 'string' ? period : null;
  },
  async run(ctx, params) {
    requireState(await readPage(ctx), 'logged_in_conti');
    const period = periodOf(params);
    // validate() refused a bad period already; only a day turning since then could differ.
    if (typeof period === 'string') throw new Error(period);
    const from = toItalianDate(period.from);
    const to = toItalianDate(period.to);

    // A quick link that means the preset fills both dates with one click; what it filled is
    // checked, and typed over when the site counts the period another way.
    let how: 'quick_link' | 'typed' = 'typed';
    const quick = await quickLinkOf(ctx, period.preset);
    if (quick) {
      await clickOnScreen(ctx, quick, `the quick link of ${period.preset}`);
      const filled = [await ctx.page.value(SELECTORS.from), await ctx.page.value(SELECTORS.to)];
      if (filled[0] === from && filled[1] === to) how = 'quick_link';
    }
    if (how === 'typed') {
      await fillField(ctx, SELECTORS.from, from, 'the Dal field');
      await fillField(ctx, SELECTORS.to, to, 'the Al field');
    }
    await clickToPage(ctx, SELECTORS.apply, 'the Applica button');

    const after = await readPage(ctx);
    requireState(after, 'logged_in_conti');
    const conti = after.conti!;
    if (conti.error) {
      throw new SiteError(
        `the movements from ${from} to ${to}`,
        `the site refused the period: "${conti.error}"`,
        chainFields(after),
      );
    }
    const shown = shownPeriod(conti);
    if (!shown || shown.from !== period.from || shown.to !== period.to) {
      throw new SiteError(
        `the movements from ${from} to ${to}`,
        `the page showing ${JSON.stringify(conti.periodText)} at ${after.url}`,
        chainFields(after),
      );
    }
    const { state, page_url } = chainFields(after);
    return {
      period,
      shown,
      how,
      state,
      page_url,
      message: `The movements from ${from} to ${to} (${how === 'quick_link' ? 'its quick link' : 'dates typed'}, then Applica)`,
    };
  },
});
