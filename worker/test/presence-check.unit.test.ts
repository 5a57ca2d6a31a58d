import { isUtcZone, presenceWarnings } from '../src/identity/presence-check';

describe('a persona that would tell pages UTC by accident', () => {
  test('UTC under its names is UTC; places at +0 and other zones are not', () => {
    for (const z of ['UTC', 'Etc/UTC', 'Etc/GMT', 'GMT', 'Etc/Universal', 'Zulu', 'Etc/GMT+0'])
      expect({ z, utc: isUtcZone(z) }).toEqual({ z, utc: true });
    for (const z of ['Europe/London', 'Africa/Abidjan', 'Atlantic/Reykjavik', 'Europe/Rome'])
      expect({ z, utc: isUtcZone(z) }).toEqual({ z, utc: false });
  });

  test('warns only without an identity and without BROWSER_TIMEZONE, on a UTC host', () => {
    const bare = { hasIdentity: false, browserTimezone: null, hostZone: 'Etc/UTC' };
    const [line, ...rest] = presenceWarnings(bare);
    expect(rest).toEqual([]);
    expect(line).toContain('Etc/UTC');
    expect(line).toContain('BROWSER_TIMEZONE');
    expect(presenceWarnings({ ...bare, hasIdentity: true })).toEqual([]);
    expect(presenceWarnings({ ...bare, browserTimezone: 'Europe/Rome' })).toEqual([]);
    expect(presenceWarnings({ ...bare, hostZone: 'Europe/Berlin' })).toEqual([]);
  });
});
