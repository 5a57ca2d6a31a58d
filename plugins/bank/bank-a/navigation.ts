import type { PluginContext, PluginResult } from '@persona-browser/plugin-sdk';
import { SiteError } from '@persona-browser/plugin-sdk';
import { clickToNavigate } from './human';
import type { BankAPage, BankAState } from './page-state';
import {
  LOGGED_IN,
  describePage,
  foundThen,
  guide,
  landing,
  readPage,
  readUntil,
  requireState,
  stateOf,
} from './page-state';
import type { Section } from './site';
import { SELECTORS, baseUrl } from './site';

/** A section's page loads after the click (or the site's redirect to its login). */
const SECTION_WAIT_MS = 15_000;

const NAMES: Record<Section, string> = {
  home: 'Home',
  conto: 'Conto corrente',
  carta: 'Carte',
};

/** Refuses a page that left the logged-in area (the session expired on the way). */
function refuseLeft(p: BankAPage, expected: string): void {
  if (LOGGED_IN.includes(stateOf(p))) return;
  const g = guide(p);
  throw new SiteError(expected, foundThen(p, g.hint), { ...g });
}

/**
 * Opens a section of the logged-in area by the site's own links, as a person does: the main
 * menu's entry; from a page without the menu (the communications after the login) first the
 * logo, which leads home. The address is loaded only when the page has neither.
 */
export async function openSection(
  ctx: PluginContext,
  from: BankAPage,
  target: Section,
  steps: string[],
): Promise<BankAPage> {
  const wanted: BankAState = `logged_in_${target}`;
  let page = from;
  if (stateOf(page) === wanted) return page;
  if (!page.hasMenu) {
    if (page.hasLogo) {
      await clickToNavigate(ctx, SELECTORS.logo, 'the bank logo in the header');
      steps.push('clicked the logo in the header');
    } else {
      const home = `${baseUrl(ctx)}/home`;
      await ctx.page.goto(home);
      steps.push(`went to ${home}: the page has no link to the home`);
    }
    page = await readUntil(ctx, (p) => p.hasMenu || !p.loggedIn, SECTION_WAIT_MS);
    refuseLeft(page, `the ${NAMES[target]} page`);
    if (stateOf(page) === wanted) return page;
    if (!page.hasMenu) throw new SiteError('the main menu', describePage(page), { ...guide(page) });
  }
  await clickToNavigate(ctx, SELECTORS.menuLink[target], `${NAMES[target]} in the main menu`);
  steps.push(`clicked ${NAMES[target]} in the main menu`);
  page = await readUntil(ctx, (p) => stateOf(p) === wanted || !p.loggedIn, SECTION_WAIT_MS);
  refuseLeft(page, `the ${NAMES[target]} page`);
  if (stateOf(page) !== wanted) {
    throw new SiteError(`state ${wanted}`, describePage(page), { ...guide(page) });
  }
  return page;
}

/** What vai-a-home, vai-a-conto and vai-a-carta answer. */
export function arrived(page: BankAPage, from_state: BankAState, steps: string[]): PluginResult {
  const said = steps.length > 0 ? steps.join(', then ') : `already there, nothing to do`;
  return {
    from_state,
    steps,
    ...landing(page),
    message: `${said.charAt(0).toUpperCase()}${said.slice(1)}: state ${stateOf(page)}`,
  };
}

/** vai-a-conto and vai-a-carta: from any page of the logged-in area to the section. */
export async function goToSection(ctx: PluginContext, target: Section): Promise<PluginResult> {
  const page = await readPage(ctx);
  const from_state = requireState(page, LOGGED_IN, 'a page of the logged-in area');
  const steps: string[] = [];
  const reached = await openSection(ctx, page, target, steps);
  return arrived(reached, from_state, steps);
}
