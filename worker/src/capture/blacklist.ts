/**
 * URL patterns that plugin families keep out of the network capture (docs/api.md, Network capture).
 *
 * A family registers patterns for a site, a hostname suffix such as `example.com` (which also
 * covers `www.example.com`, not `badexample.com`). While a page's main-frame URL is on that
 * site, lines whose URL matches a pattern are never stored. A pattern is a plain substring of
 * the URL or a RegExp tested against it. The network reply lists the patterns in force for the
 * page's current site as strings: a substring as given, a RegExp as `/source/flags`.
 */

export type BlacklistPattern = string | RegExp;

interface Entry {
  site: string;
  pattern: BlacklistPattern;
  owner: string;
}

function normaliseSite(site: string): string {
  return site.trim().toLowerCase().replace(/^\.+/, '').replace(/\.+$/, '');
}

/** The hostname of `url`, lower case; '' when it has none (about:blank, data:…). */
export function hostnameOf(url: string): string {
  try {
    return new URL(url).hostname.toLowerCase();
  } catch {
    return '';
  }
}

export function onSite(hostname: string, site: string): boolean {
  return hostname !== '' && (hostname === site || hostname.endsWith(`.${site}`));
}

export const describePattern = (p: BlacklistPattern): string =>
  typeof p === 'string' ? p : String(p);

export function patternMatches(p: BlacklistPattern, url: string): boolean {
  if (typeof p === 'string') return url.includes(p);
  p.lastIndex = 0;
  return p.test(url);
}

export class Blacklist {
  private entries: Entry[] = [];
  /** Goes up on every change, so that pages can cache what applies to their site. */
  version = 0;

  /**
   * Registers `patterns` for `site` on behalf of `owner` (a plugin family). Returns a function
   * that removes exactly these entries again.
   */
  add(site: string, patterns: BlacklistPattern[], owner = ''): () => void {
    const s = normaliseSite(site);
    if (!s) throw new Error('a blacklist needs a site (a hostname such as example.com)');
    const added: Entry[] = patterns.map((p) => ({
      site: s,
      // A global or sticky RegExp keeps state between tests; the stored copy has none.
      pattern: typeof p === 'string' ? p : new RegExp(p.source, p.flags.replace(/[gy]/g, '')),
      owner,
    }));
    for (const p of added) {
      if (typeof p.pattern === 'string' && p.pattern === '') {
        throw new Error('an empty substring would blacklist every URL');
      }
    }
    this.entries.push(...added);
    this.version += 1;
    return () => {
      const before = this.entries.length;
      this.entries = this.entries.filter((e) => !added.includes(e));
      if (this.entries.length !== before) this.version += 1;
    };
  }

  /** Removes every entry registered by `owner`. */
  removeOwner(owner: string): void {
    const before = this.entries.length;
    this.entries = this.entries.filter((e) => e.owner !== owner);
    if (this.entries.length !== before) this.version += 1;
  }

  /** The patterns in force for a page whose main frame is on `hostname`. */
  patternsFor(hostname: string): BlacklistPattern[] {
    return this.entries.filter((e) => onSite(hostname, e.site)).map((e) => e.pattern);
  }
}
