import type { PluginContext } from '@persona-browser/plugin-sdk';
import { SiteError } from '@persona-browser/plugin-sdk';
import type { SocialPage } from './page-state';
import { describePage } from './page-state';
import { PEOPLE, SELECTORS } from './site';

/**
 * What the people and navigation plugins share: counts as numbers, follow buttons as statuses,
 * the read of a profile's about block, the login-wall refusal.
 */

export type FollowStatus = 'following' | 'requested' | 'not_following' | 'own_profile';

const FOLLOW_LABELS: Record<string, FollowStatus> = {
  follow: 'not_following',
  'follow back': 'not_following',
  following: 'following',
  requested: 'requested',
  'edit profile': 'own_profile',
};

/** A follow button's label as a status; null for no button or a label the site never used. */
export function followStatusOf(label: string | null): FollowStatus | null {
  return FOLLOW_LABELS[(label ?? '').trim().toLowerCase()] ?? null;
}

const SCALE: Record<string, number> = { K: 1e3, M: 1e6, B: 1e9 };

/**
 * A count as the site writes it, as a number: "283M" → 283000000, "1.2K" → 1200,
 * "12,345" → 12345, "1,2 Mio." is not handled (null when no number is found).
 */
export function parseCount(text: string | null): number | null {
  const m = /(\d[\d,.]*)\s*([KMB])?(?![a-z])/i.exec(text ?? '');
  let digits = m?.[1];
  if (digits === undefined) return null;
  const unit = (m?.[2] ?? '').toUpperCase();
  // With a unit the separator is a decimal point ("1.2K", "1,2K"); without one, groups of three.
  digits = unit
    ? digits.replace(',', '.')
    : digits.replace(/[,.](?=\d{3}(?:\D|$))/g, '').replace(',', '.');
  const n = Number(digits);
  return Number.isFinite(n) ? Math.round(n * (SCALE[unit] ?? 1)) : null;
}

/** A profile's about block, read in the isolated world. */
export interface ProfileAbout {
  name: string | null;
  bio: string | null;
  links: { text: string; href: string }[];
  verified: boolean;
  isPrivate: boolean;
  /** The header's texts of the counts; `title` (an exact number) when the site gives one. */
  posts: string | null;
  followers: string | null;
  following: string | null;
}

type Marks = typeof SELECTORS & typeof PEOPLE;

/* Runs in the page's isolated world: it may use only its argument and the DOM. */
function aboutInPage(m: Marks): ProfileAbout | null {
  const header = document.querySelector(m.profileHeader);
  if (!header) return null;
  const text = (e: Element | null): string => (e?.textContent ?? '').replace(/\s+/g, ' ').trim();
  const exact = (e: Element | null): string | null => {
    if (!e) return null;
    const title = e.querySelector('[title]')?.getAttribute('title') ?? e.getAttribute('title');
    return title && /\d/.test(title) ? title : text(e);
  };
  const links = Array.from(document.querySelectorAll(m.profileLinks)).map((a) => {
    const href = a.getAttribute('href') ?? '';
    let real = href;
    try {
      // The site links out through its shim: the real address is a query parameter.
      const url = new URL(href, location.href);
      real = url.searchParams.get(m.shimParam) ?? url.href;
    } catch {
      /* keep the attribute as written */
    }
    return { text: text(a), href: real };
  });
  const postsItem = Array.from(header.querySelectorAll('li, span')).find((e) =>
    /^[\d.,]+\s*[KMB]?\s+posts?$/i.test(text(e)),
  );
  const bio = text(document.querySelector(m.profileBio));
  const name = text(document.querySelector(m.profileName));
  const main = document.querySelector(m.main);
  return {
    name: name || null,
    bio: bio || null,
    links,
    verified: document.querySelector(m.verifiedBadge) !== null,
    isPrivate: text(main).toLowerCase().includes(m.privateNotice),
    posts: postsItem ? text(postsItem) : null,
    followers: exact(document.querySelector(m.followersLink)),
    following: exact(document.querySelector(m.followingLink)),
  };
}

/** Reads the about block of the profile on screen; null when there is no profile header. */
export function readAbout(ctx: PluginContext): Promise<ProfileAbout | null> {
  return ctx.page.evaluate(aboutInPage, { ...SELECTORS, ...PEOPLE });
}

/** The login wall answers nothing about the site: the persona has to log in first. */
export function refuseLoginWall(p: SocialPage, expected: string): void {
  if (p.loginWall) {
    throw new SiteError(expected, describePage(p), {
      state: 'unknown',
      hint: 'log in through the live view',
    });
  }
}
