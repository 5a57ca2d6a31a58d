import fs from 'node:fs';
import path from 'node:path';
import type { Browser, Protocol } from 'puppeteer-core';
import { browserConnection } from '../devtools/child-sessions';
import { withTimeout } from '../util';

/**
 * The cookies a browser held when it was closed, kept beside its profile.
 *
 * Chromium writes the cookies a site set to the profile's database every 30 s, and the rest as it
 * closes. That last write is not sure: a light sleep on a busy Swarm node closed the browser
 * cleanly in 0.9 s, and the next start read the cookie of an earlier session (a persona's
 * login, lost). So the worker reads the browser's persistent cookies before it closes it, writes
 * them here once the browser has ended, and the next start puts them back when the database
 * does not hold them. A file older than the database is not used: the browser wrote the
 * database after it (a later session), so the database is the newer truth.
 */
export const KEPT_COOKIES_FILE = 'persona-cookies.json';

/** Where Chromium keeps the cookie database of the default profile (older and newer layouts). */
const DATABASES = [path.join('Default', 'Cookies'), path.join('Default', 'Network', 'Cookies')];

export type Cookie = Protocol.Network.Cookie;

/** Whether a cookie can be kept: a session cookie ends with its browser, an opaque key has no site. */
function keepable(c: Cookie): boolean {
  return !c.session && !c.partitionKeyOpaque;
}

/** The browser's persistent cookies (its default context), or null when it does not answer. */
export async function readCookies(browser: Browser, timeoutMs: number): Promise<Cookie[] | null> {
  // The session stays attached: detaching a session of the browser's target makes puppeteer
  // forget that target (`Browser target is not found` after).
  const read = (async () => {
    const { root } = await browserConnection(browser);
    const { cookies } = await root.send('Storage.getCookies', {});
    return cookies.filter(keepable);
  })();
  return withTimeout(read, timeoutMs, () => new Error('no cookies in time')).catch(() => null);
}

/** Writes the cookies of a closed browser beside its profile (whole or not at all; owner only). */
export function keepCookies(profileDir: string, cookies: Cookie[]): void {
  const file = path.join(profileDir, KEPT_COOKIES_FILE);
  const partial = `${file}.partial`;
  fs.writeFileSync(partial, JSON.stringify(cookies), { mode: 0o600 });
  fs.renameSync(partial, file);
}

function mtimeMs(file: string): number | null {
  try {
    return fs.statSync(file).mtimeMs;
  } catch {
    return null;
  }
}

/**
 * The kept cookies to check the next browser against, read before it starts (it may write its
 * database as it starts): null when none are kept, or when the database is newer than them.
 */
export function keptCookies(profileDir: string): Cookie[] | null {
  const file = path.join(profileDir, KEPT_COOKIES_FILE);
  const kept = mtimeMs(file);
  if (kept === null) return null;
  const written = DATABASES.map((db) => mtimeMs(path.join(profileDir, db)));
  if (written.some((ms) => ms !== null && ms > kept)) return null;
  try {
    const parsed: unknown = JSON.parse(fs.readFileSync(file, 'utf8'));
    // The worker's own file, written by keepCookies from the browser's answer.
    return Array.isArray(parsed) ? (parsed as Cookie[]) : null;
  } catch {
    return null;
  }
}

const keyOf = (c: Cookie): string =>
  JSON.stringify([c.name, c.domain, c.path, c.partitionKey?.topLevelSite ?? null]);
const stateOf = (c: Cookie): string =>
  JSON.stringify([c.value, Math.round(c.expires), c.secure, c.httpOnly, c.sameSite ?? null]);

/** The kept cookie as the browser takes it back: a host-only one (no leading dot) by its URL. */
function paramOf(c: Cookie): Protocol.Network.CookieParam {
  const hostOnly = !c.domain.startsWith('.');
  return {
    name: c.name,
    value: c.value,
    ...(hostOnly
      ? { url: `${c.secure ? 'https' : 'http'}://${c.domain}${c.path}` }
      : { domain: c.domain }),
    path: c.path,
    secure: c.secure,
    httpOnly: c.httpOnly,
    sameSite: c.sameSite,
    expires: c.expires,
    priority: c.priority,
    sourceScheme: c.sourceScheme,
    sourcePort: c.sourcePort,
    partitionKey: c.partitionKey,
  };
}

/** What putting the kept cookies back changed: none when the database held them all. */
export interface CookieRepair {
  /** Kept cookies the browser started without, or with another value. */
  restored: number;
  /** Cookies the browser started with that it no longer held when it closed. */
  removed: number;
}

/**
 * Makes a browser that just started hold the cookies `kept` (those not expired since), when the
 * profile's database gave it others: all of them are set again, after the jar is cleared.
 */
export async function restoreCookies(browser: Browser, kept: Cookie[]): Promise<CookieRepair> {
  const now = Date.now() / 1000;
  const wanted = new Map(kept.filter((c) => c.expires > now).map((c) => [keyOf(c), c]));
  const { root } = await browserConnection(browser);
  const { cookies } = await root.send('Storage.getCookies', {});
  const found = new Map(cookies.filter(keepable).map((c) => [keyOf(c), c]));
  let restored = 0;
  for (const [key, c] of wanted) {
    const has = found.get(key);
    if (!has || stateOf(has) !== stateOf(c)) restored += 1;
  }
  const removed = [...found.keys()].filter((key) => !wanted.has(key)).length;
  if (restored === 0 && removed === 0) return { restored, removed };
  await root.send('Storage.clearCookies', {});
  await root.send('Storage.setCookies', { cookies: [...wanted.values()].map(paramOf) });
  return { restored, removed };
}
