import type { PluginContext } from '@persona-browser/plugin-sdk';
import { SiteError, clickOnScreen, definePlugin } from '@persona-browser/plugin-sdk';
import type { Period } from '../../italian';
import { resolvePeriod, toItalianDate, todayIso } from '../../italian';
import { fillField } from '../../human';
import { chooseOption, sameLabel } from '../human';
import { settledList } from '../movements';
import type { BankAPage, ListView } from '../page-state';
import {
  WITH_MOVEMENTS,
  readPage,
  readUntil,
  requireState,
  shownPeriod,
  stateOf,
} from '../page-state';
import { CUSTOM_LABEL, PRESET_LABELS, SELECTORS } from '../site';

interface Params {
  preset: string;
  from?: string;
  to?: string;
}

/** The manifest's default: with from and to it stands for "no preset given". */
const DEFAULT_PRESET = 'last_30_days';
/** The list reloads by XHR after a choice. */
const LIST_WAIT_MS = 15_000;
const CUSTOM_OPEN_MS = 5_000;

/** The period asked for, or what is wrong with the parameters. */
function requested(p: Params, today: string): Period | string {
  if (p.from || p.to) {
    const preset = p.preset === DEFAULT_PRESET ? undefined : p.preset;
    return resolvePeriod({ preset, from: p.from, to: p.to }, today);
  }
  return resolvePeriod({ preset: p.preset }, today);
}

const same = (a: { from: string; to: string } | null, b: { from: string; to: string }): boolean =>
  !!a && a.from === b.from && a.to === b.to;

/** Waits for the list to reload after a choice; `done` says when it shows the new period. */
async function reloaded(
  ctx: PluginContext,
  before: ListView,
  expected: Period,
): Promise<BankAPage> {
  let sawBusy = false;
  return readUntil(
    ctx,
    (p) => {
      if (!p.list) return true;
      if (p.list.busy) sawBusy = true;
      if (p.list.busy) return false;
      if (p.list.filterError) return true;
      return (
        same(shownPeriod(p.list), expected) || sawBusy || p.list.shownText !== before.shownText
      );
    },
    LIST_WAIT_MS,
  );
}

const capitalized = (s: string): string => `${s.charAt(0).toUpperCase()}${s.slice(1)}`;

const selectedLabel = (ctx: PluginContext) => async (): Promise<string | null> =>
  (await readPage(ctx)).list?.select?.label ?? null;

/** Chooses a preset of the selector; nothing to do when it is the one chosen. */
async function applyPreset(
  ctx: PluginContext,
  list: ListView,
  label: string,
  period: Period,
  steps: string[],
): Promise<BankAPage | null> {
  if (sameLabel(list.select?.label, label) && !list.customOpen) {
    steps.push(`"${label}" was already chosen`);
    return null;
  }
  await chooseOption(ctx, label, list.select?.options ?? [], selectedLabel(ctx));
  steps.push(`chose "${label}" in the period selector`);
  return reloaded(ctx, list, period);
}

/** Chooses "Personalizzato", types both dates (dd/mm/yyyy) and clicks Cerca. */
async function applyDates(
  ctx: PluginContext,
  list: ListView,
  period: Period,
  steps: string[],
): Promise<BankAPage> {
  if (!list.customOpen) {
    await chooseOption(ctx, CUSTOM_LABEL, list.select?.options ?? [], selectedLabel(ctx));
    steps.push(`chose "${CUSTOM_LABEL}" in the period selector`);
    const open = await readUntil(ctx, (p) => !!p.list?.customOpen, CUSTOM_OPEN_MS);
    if (!open.list?.customOpen) {
      throw new SiteError(
        'the custom dates after "Personalizzato"',
        `no date fields at ${open.url}`,
      );
    }
  }
  const from = toItalianDate(period.from);
  const to = toItalianDate(period.to);
  await fillField(ctx, SELECTORS.fromInput, from, 'the "Dal" date');
  await fillField(ctx, SELECTORS.toInput, to, 'the "Al" date');
  await clickOnScreen(ctx, SELECTORS.searchButton, 'the Cerca button');
  steps.push(`typed ${from} and ${to}, clicked Cerca`);
  return reloaded(ctx, list, period);
}

export default definePlugin<Params>({
  validate: (p) => {
    const r = requested(p, todayIso());
    return typeof r === 'string' ? r : null;
  },
  async run(ctx, p) {
    const period = requested(p, todayIso());
    if (typeof period === 'string') throw new SiteError('a valid period', period);
    const start = await settledList(ctx);
    const steps: string[] = [];
    const label = period.preset ? PRESET_LABELS[period.preset] : undefined;
    const offered = label && start.list.select?.options.some((o) => sameLabel(o, label));
    const after = offered
      ? await applyPreset(ctx, start.list, label, period, steps)
      : await applyDates(ctx, start.list, period, steps);
    const page = after ?? start;
    requireState(page, WITH_MOVEMENTS);
    if (page.list?.filterError) {
      throw new SiteError(
        `the movements from ${period.from} to ${period.to}`,
        `the site's message "${page.list.filterError}" at ${page.url}`,
      );
    }
    const shown = page.list ? shownPeriod(page.list) : null;
    if (!page.list || page.list.busy || !shown) {
      throw new SiteError(
        'the movements list showing its period',
        `no shown period at ${page.url}`,
      );
    }
    if (!period.preset && !same(shown, period)) {
      throw new SiteError(
        `the movements from ${period.from} to ${period.to}`,
        `the list showing ${shown.from} to ${shown.to} at ${page.url}`,
      );
    }
    return {
      period,
      shown,
      state: stateOf(page),
      page_url: page.url,
      message: `${capitalized(steps.join(', then '))}: the site shows ${shown.from} to ${shown.to}`,
    };
  },
});
