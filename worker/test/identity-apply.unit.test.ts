import type { ProxyIdentity } from '@persona-browser/contracts';
import {
  identityGeolocation,
  identityLaunch,
  posixLocale,
  preferredLanguages,
} from '../src/identity/apply';

const identity = (over: Partial<ProxyIdentity> = {}): ProxyIdentity => ({
  proxy: { server: 'http://gw.example.net:7777', username: 'acct-session-x1', password: 'pw-x1' },
  session: 'x1',
  exit_ip: '203.0.113.7',
  country: 'DE',
  timezone: 'Europe/Berlin',
  locale: 'de-DE',
  latitude: 52.52,
  longitude: 13.405,
  created_at: '2026-11-24T10:00:00.000Z',
  ...over,
});

describe('languages of a locale', () => {
  test('the locale, its language, then English; each once', () => {
    expect(preferredLanguages('de-DE')).toEqual(['de-DE', 'de', 'en']);
    expect(preferredLanguages('pt-BR')).toEqual(['pt-BR', 'pt', 'en']);
    expect(preferredLanguages('en-GB')).toEqual(['en-GB', 'en']);
    expect(preferredLanguages('en-US')).toEqual(['en-US', 'en']);
    expect(preferredLanguages('en')).toEqual(['en']);
    expect(preferredLanguages('fr')).toEqual(['fr', 'en']);
  });

  test('the POSIX name for LANG', () => {
    expect(posixLocale('de-DE')).toBe('de_DE.UTF-8');
    expect(posixLocale('fr')).toBe('fr.UTF-8');
  });
});

describe('launch switches and environment', () => {
  test('everything through the relay on loopback, nothing direct, WebRTC without UDP of its own', () => {
    const { args } = identityLaunch(identity(), 41234);
    expect(args).toContain('--proxy-server=http://127.0.0.1:41234');
    expect(args).toContain('--proxy-bypass-list=<-loopback>');
    expect(args).toContain('--webrtc-ip-handling-policy=disable_non_proxied_udp');
    // The upstream and its credentials never reach Chromium's command line.
    expect(args.join(' ')).not.toMatch(/gw\.example\.net|acct-session|pw-x1/);
  });

  test('language switches and environment agree with the locale', () => {
    const { args, env } = identityLaunch(identity(), 1);
    expect(args).toContain('--lang=de-DE');
    expect(args).toContain('--accept-lang=de-DE,de,en');
    expect(env).toEqual({
      TZ: 'Europe/Berlin',
      LANG: 'de_DE.UTF-8',
      LANGUAGE: 'de_DE:de:en',
      LC_ALL: '',
    });
  });

  test('an English locale lists English once', () => {
    const { args, env } = identityLaunch(
      identity({ locale: 'en-US', timezone: 'America/Chicago' }),
      1,
    );
    expect(args).toContain('--accept-lang=en-US,en');
    expect(env.LANGUAGE).toBe('en_US:en');
    expect(env.TZ).toBe('America/Chicago');
  });

  test('no switch is given twice', () => {
    const { args } = identityLaunch(identity(), 1);
    const names = args.map((a) => a.split('=')[0]);
    expect(new Set(names).size).toBe(names.length);
  });
});

describe('geolocation', () => {
  test('the identity’s coordinates with a city-scale accuracy', () => {
    const fix = identityGeolocation(identity());
    expect(fix.latitude).toBe(52.52);
    expect(fix.longitude).toBe(13.405);
    expect(fix.accuracy).toBeGreaterThanOrEqual(20);
    expect(fix.accuracy).toBeLessThanOrEqual(100);
  });

  test('stable for one identity, spread across identities', () => {
    expect(identityGeolocation(identity()).accuracy).toBe(identityGeolocation(identity()).accuracy);
    const spread = new Set(
      Array.from(
        { length: 40 },
        (_, i) => identityGeolocation(identity({ session: `s${i}` })).accuracy,
      ),
    );
    expect(spread.size).toBeGreaterThan(10);
    for (const a of spread) expect(a >= 20 && a <= 100).toBe(true);
  });
});
