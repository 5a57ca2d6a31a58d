/**
 * What a persona's presence gives away by accident. A server's clock is usually UTC, and a
 * browser telling UTC is one a detector flags (fpscanner does): almost no person's desktop
 * runs on it. A persona tells the host's zone when it has neither a proxy identity (whose zone
 * wins) nor BROWSER_TIMEZONE.
 */

/** Names the time-zone database gives to UTC itself (not to places that sit at +0). */
const UTC_NAMES = /^(Etc\/)?(UTC|UCT|Universal|Zulu|Greenwich|GMT([+-]?0)?)$/i;

export const isUtcZone = (zone: string): boolean => UTC_NAMES.test(zone);

/** The zone this process (and a browser it starts with no TZ of its own) tells pages. */
export function hostTimeZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone;
}

export interface PresenceFacts {
  /** A proxy identity gives the persona its exit's zone. */
  hasIdentity: boolean;
  /** BROWSER_TIMEZONE, or null. */
  browserTimezone: string | null;
  /** The host's zone (what the browser tells without either of the above). */
  hostZone: string;
}

/** One line per thing a page can tell is off; empty when nothing is. */
export function presenceWarnings(f: PresenceFacts): string[] {
  if (f.hasIdentity || f.browserTimezone !== null || !isUtcZone(f.hostZone)) return [];
  return [
    `pages are told the time zone ${f.hostZone}, this server's: few people's computers run on ` +
      'UTC, and detectors flag it. Set BROWSER_TIMEZONE (and BROWSER_LOCALE) for this persona ' +
      '(persona.env) or the fleet (.env), or give it a proxy identity.',
  ];
}
