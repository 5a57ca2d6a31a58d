import crypto from 'node:crypto';
import type { ProxyIdentity } from '@persona-browser/contracts';

/** What the browser process is started with to wear a proxy identity. */
export interface IdentityLaunch {
  args: string[];
  env: Record<string, string>;
}

/** Where `navigator.geolocation` puts the persona (Emulation.setGeolocationOverride). */
export interface IdentityGeolocation {
  latitude: number;
  longitude: number;
  /** Metres, as a phone or Wi-Fi fix in a city reports. */
  accuracy: number;
}

/**
 * The languages a person of `locale` lists, most wanted first: the locale, its bare language,
 * then English as the usual fallback, each once (`de-DE` → de-DE, de, en; `en-GB` → en-GB, en).
 */
export function preferredLanguages(locale: string): string[] {
  const language = locale.split('-')[0] ?? locale;
  return [...new Set([locale, language, 'en'])];
}

/** The POSIX locale name (`de-DE` → `de_DE.UTF-8`), for LANG. */
export function posixLocale(locale: string): string {
  return `${locale.replace('-', '_')}.UTF-8`;
}

/** Where and in which language the person is: the time zone and locale every page tells. */
export interface Presence {
  timezone: string | null;
  locale: string | null;
}

/**
 * The switches and environment for a time zone and a language: TZ for the time zone (it
 * reaches pages and dedicated workers), LANG/LANGUAGE for the process and its UI, `--lang`,
 * and `--accept-lang` for navigator.language(s) and the Accept-Language header. `--accept-lang`
 * takes a plain list: Chromium adds the q-weights to the header itself.
 */
export function presenceLaunch(presence: Presence): IdentityLaunch {
  const args: string[] = [];
  const env: Record<string, string> = {};
  if (presence.timezone) env.TZ = presence.timezone;
  if (presence.locale) {
    const languages = preferredLanguages(presence.locale);
    args.push(`--lang=${presence.locale}`, `--accept-lang=${languages.join(',')}`);
    env.LANG = posixLocale(presence.locale);
    env.LANGUAGE = languages.map((l) => l.replace('-', '_')).join(':');
    // An LC_ALL inherited from the host would outrank LANG; empty counts as unset.
    env.LC_ALL = '';
  }
  return { args, env };
}

/**
 * The switches and environment that make Chromium one consistent person behind the proxy:
 *
 * - every request through the worker's relay on loopback, which adds the session's
 *   credentials (Chromium takes none on its command line); `<-loopback>` removes Chromium's
 *   implicit bypass of localhost, so nothing at all goes direct;
 * - WebRTC only over the proxy: no UDP of its own, so no host or reflexive address leaks.
 *   The switch is `--webrtc-ip-handling-policy` (measured, Chromium 156: the older
 *   `--force-webrtc-ip-handling-policy` is not in this binary; with it a STUN server still got
 *   UDP and the page a `srflx` candidate holding the machine's address; with this one, neither);
 * - the identity's time zone and language (`presenceLaunch`).
 */
export function identityLaunch(identity: ProxyIdentity, relayPort: number): IdentityLaunch {
  const presence = presenceLaunch(identity);
  return {
    args: [
      `--proxy-server=http://127.0.0.1:${relayPort}`,
      '--proxy-bypass-list=<-loopback>',
      '--webrtc-ip-handling-policy=disable_non_proxied_udp',
      ...presence.args,
    ],
    env: presence.env,
  };
}

/**
 * The identity's coordinates with a city-scale accuracy between 20 and 100 m, drawn from the
 * proxy session so that one identity always reports the same fix.
 */
export function identityGeolocation(identity: ProxyIdentity): IdentityGeolocation {
  const digest = crypto.createHash('sha256').update(identity.session).digest();
  return {
    latitude: identity.latitude,
    longitude: identity.longitude,
    accuracy: 20 + (digest.readUInt16BE(0) % 81),
  };
}
