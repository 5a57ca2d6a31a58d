import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { identitySchema } from '@persona-browser/contracts';
import { loadWakerConfig } from '../src/config';
import {
  COUNTRY_LOCALES,
  DEFAULT_USERNAME_TEMPLATE,
  IdentityError,
  ProxyErrorReadings,
  geoipUrl,
  localeFor,
  makeIdentity,
  newSession,
  parseCountry,
  parseGeoipAnswer,
  proxyStatusSchema,
  sessionUsername,
  templateProblem,
} from '../src/identity';
import { discoverPersonas } from '../src/persona/folders';

const scratch: string[] = [];
afterAll(() => {
  for (const dir of scratch) fs.rmSync(dir, { recursive: true, force: true });
});

function tmp(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-identity-unit-'));
  scratch.push(dir);
  return dir;
}

describe('the country → locale table', () => {
  test('has the common countries with their own language and the country as region', () => {
    expect(Object.keys(COUNTRY_LOCALES).length).toBeGreaterThanOrEqual(40);
    expect(localeFor('DE')).toBe('de-DE');
    expect(localeFor('US')).toBe('en-US');
    expect(localeFor('GB')).toBe('en-GB');
    expect(localeFor('FR')).toBe('fr-FR');
    expect(localeFor('BR')).toBe('pt-BR');
    expect(localeFor('JP')).toBe('ja-JP');
    expect(localeFor('IR')).toBe('fa-IR');
    expect(localeFor('at')).toBe('de-AT');
  });

  test('every entry is a locale the identity file accepts, for its own country', () => {
    for (const [country, locale] of Object.entries(COUNTRY_LOCALES)) {
      expect(locale).toMatch(/^[a-z]{2,3}-[A-Z]{2}$/);
      expect(locale.slice(-2)).toBe(country);
      expect(parseCountry(country)).toEqual({ country });
      // Intl knows it (Chromium's --lang takes the same tags).
      expect(Intl.getCanonicalLocales(locale)).toEqual([locale]);
    }
  });

  test('an unknown country falls back to en-US', () => {
    expect(localeFor('AQ')).toBe('en-US');
    expect(localeFor('ZZ')).toBe('en-US');
  });
});

describe('PROXY_COUNTRY', () => {
  test('two letters in any case become the upper-case code', () => {
    expect(parseCountry('de')).toEqual({ country: 'DE' });
    expect(parseCountry(' Us ')).toEqual({ country: 'US' });
    expect(parseCountry('XK')).toEqual({ country: 'XK' });
  });

  test.each([
    ['DEU', 'two-letter'],
    ['d', 'two-letter'],
    ['1A', 'two-letter'],
    ['XX', 'XX is not an ISO 3166-1 country code'],
    ['EU', 'EU is not an ISO 3166-1 country code'],
    ['uk', 'use GB'],
  ])('%s is refused with a clear message', (value, message) => {
    const parsed = parseCountry(value);
    expect('error' in parsed && parsed.error).toContain(message);
  });

  test('in persona.env: sleepy only, a valid code; a problem names the persona and variable', () => {
    const root = tmp();
    const personas: Record<string, string> = {
      de: 'PORT=5201\nMODE=sleepy\nIDLE_TIMEOUT=60\nPROXY_COUNTRY=de\n',
      plain: 'PORT=5202\nMODE=sleepy\nIDLE_TIMEOUT=60\n',
      empty: 'PORT=5203\nMODE=always-on\nPROXY_COUNTRY=\n',
      always: 'PORT=5204\nMODE=always-on\nPROXY_COUNTRY=DE\n',
      bad: 'PORT=5205\nMODE=sleepy\nIDLE_TIMEOUT=60\nPROXY_COUNTRY=Germany\n',
      unknown: 'PORT=5206\nMODE=sleepy\nIDLE_TIMEOUT=60\nPROXY_COUNTRY=QQ\n',
    };
    for (const [name, env] of Object.entries(personas)) {
      fs.mkdirSync(path.join(root, name));
      fs.writeFileSync(path.join(root, name, 'persona.env'), env);
    }
    const { specs, problems } = discoverPersonas(root);
    expect(specs.map((s) => [s.name, s.proxyCountry])).toEqual([
      ['de', 'DE'],
      ['empty', undefined],
      ['plain', undefined],
    ]);
    expect(problems.map((p) => [p.name, p.variable])).toEqual([
      ['always', 'PROXY_COUNTRY'],
      ['bad', 'PROXY_COUNTRY'],
      ['unknown', 'PROXY_COUNTRY'],
    ]);
    const byName = Object.fromEntries(problems.map((p) => [p.name, p.message]));
    expect(byName.always).toContain('sleepy personas only');
    expect(byName.bad).toContain('two-letter');
    expect(byName.unknown).toContain('QQ is not an ISO 3166-1 country code');
  });
});

describe('the session user name', () => {
  test('a session is 10 random letters and digits, new each time', () => {
    const sessions = new Set(Array.from({ length: 50 }, () => newSession()));
    expect(sessions.size).toBe(50);
    for (const s of sessions) expect(s).toMatch(/^[a-z0-9]{10}$/);
  });

  test('the default template names the account, the country in lower case and the session', () => {
    expect(DEFAULT_USERNAME_TEMPLATE).toBe('{username}-country-{country}-session-{session}');
    expect(
      sessionUsername(DEFAULT_USERNAME_TEMPLATE, {
        username: 'brd-customer-c1-zone-res',
        country: 'DE',
        session: 'ab12cd34ef',
      }),
    ).toBe('brd-customer-c1-zone-res-country-de-session-ab12cd34ef');
  });

  test('a custom template is filled in as written; $ in a value stays literal', () => {
    expect(
      sessionUsername('user_{username}__cc_{country}__sid_{session}', {
        username: 'a$&b',
        country: 'FR',
        session: 's1',
      }),
    ).toBe('user_a$&b__cc_fr__sid_s1');
  });

  test('a template needs {session} and knows no other placeholder', () => {
    expect(templateProblem(DEFAULT_USERNAME_TEMPLATE)).toBeNull();
    expect(templateProblem('{username}-{session}')).toBeNull();
    expect(templateProblem('{username}-country-{country}')).toContain('{session}');
    expect(templateProblem('{username}-{zone}-{session}')).toContain('unknown placeholder {zone}');
  });
});

describe('the GeoIP answer', () => {
  const good = {
    ip: '203.0.113.45',
    city: 'Berlin',
    country: 'DE',
    loc: '52.5244,13.4105',
    timezone: 'Europe/Berlin',
    readme: 'https://ipinfo.io/missingauth',
  };

  test('an ipinfo answer gives the exit, country, zone and coordinates', () => {
    expect(parseGeoipAnswer(good)).toEqual({
      ip: '203.0.113.45',
      country: 'DE',
      timezone: 'Europe/Berlin',
      latitude: 52.5244,
      longitude: 13.4105,
    });
    expect(parseGeoipAnswer({ ...good, country: 'de', loc: '-33.8688, 151.2093' })).toMatchObject({
      country: 'DE',
      latitude: -33.8688,
      longitude: 151.2093,
    });
    expect(parseGeoipAnswer({ ...good, ip: '2001:db8::7' }).ip).toBe('2001:db8::7');
  });

  test.each([
    ['null', null, 'not a JSON object'],
    ['a string', 'text', 'not a JSON object'],
    ['no ip', { ...good, ip: undefined }, 'field ip'],
    ['a bad ip', { ...good, ip: 'nowhere' }, 'field ip'],
    ['no country', { ...good, country: undefined }, 'field country'],
    ['a country name', { ...good, country: 'Germany' }, 'field country'],
    ['one coordinate', { ...good, loc: '52.5' }, 'field loc'],
    ['a latitude of 95', { ...good, loc: '95.1,13.4' }, 'field loc: coordinates out of range'],
    ['a bad zone', { ...good, timezone: 'Berlin time!' }, 'field timezone'],
    ['a bogon answer', { ip: '10.0.0.1', bogon: true }, 'field country'],
  ])('%s is refused with one line naming the field', (_what, body, message) => {
    expect(() => parseGeoipAnswer(body)).toThrow(IdentityError);
    expect(() => parseGeoipAnswer(body)).toThrow(message);
  });

  test('a refused value is never quoted', () => {
    expect(() => parseGeoipAnswer({ ...good, timezone: 'secret-ish value' })).not.toThrow(
      'secret-ish',
    );
  });

  test('the lookup URL is {base}/json, with the token when there is one', () => {
    expect(geoipUrl('https://ipinfo.io').href).toBe('https://ipinfo.io/json');
    expect(geoipUrl('https://ipinfo.io/', 't0k').href).toBe('https://ipinfo.io/json?token=t0k');
    expect(geoipUrl('http://127.0.0.1:9/geo', null).href).toBe('http://127.0.0.1:9/geo/json');
  });
});

describe('makeIdentity without a usable setting', () => {
  const base = {
    country: 'DE',
    proxyServer: 'http://127.0.0.1:9',
    username: 'acct',
    password: 'pw-secret-1',
    geoipBaseUrl: 'http://127.0.0.1:9',
    geoipToken: 'tok-secret-1',
  };

  test.each([
    ['no password', { password: '' }, 'PROXY_USERNAME and PROXY_PASSWORD must be set'],
    ['no user name', { username: '' }, 'PROXY_USERNAME and PROXY_PASSWORD must be set'],
    ['no {session}', { usernameTemplate: '{username}' }, 'TEMPLATE must hold {session}'],
    ['a socks proxy', { proxyServer: 'socks5://127.0.0.1:1080' }, 'must be an http:// URL'],
    ['an ftp GeoIP', { geoipBaseUrl: 'ftp://geo' }, 'GEOIP_BASE_URL must be an http(s) URL'],
  ])('%s fails at once with one clear line', async (_what, over, message) => {
    const err = await makeIdentity({ ...base, ...over }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(IdentityError);
    expect((err as Error).message).toContain(message);
    expect((err as Error).message).not.toContain('secret-1');
  });
});

describe('the API view of the proxy', () => {
  test('failing is true only while proxy_errors grew between the last two readings', () => {
    const r = new ProxyErrorReadings();
    expect([r.value, r.failing]).toEqual([null, false]);
    r.record(0);
    expect([r.value, r.failing]).toEqual([0, false]);
    r.record(3);
    expect([r.value, r.failing]).toEqual([3, true]);
    r.record(3);
    expect([r.value, r.failing]).toEqual([3, false]);
    r.record(null);
    expect([r.value, r.failing]).toEqual([null, false]);
    r.record(4);
    expect(r.failing).toBe(false);
    r.record(5);
    r.reset();
    expect([r.value, r.failing]).toEqual([null, false]);
  });

  test('the status schema holds no credential field', () => {
    const ok = { country: 'DE', exit_ip: null, session: null, proxy_errors: null, failing: false };
    expect(proxyStatusSchema.validate(ok).error).toBeUndefined();
    expect(proxyStatusSchema.validate({ ...ok, password: 'x' }).error).toBeDefined();
  });

  test('an identity made of these parts passes the contract schema', () => {
    const identity = {
      proxy: {
        server: 'http://brd.superproxy.io:33335',
        username: sessionUsername(DEFAULT_USERNAME_TEMPLATE, {
          username: 'acct',
          country: 'DE',
          session: 'ab12cd34ef',
        }),
        password: 'pw',
      },
      session: 'ab12cd34ef',
      exit_ip: '203.0.113.45',
      country: 'DE',
      timezone: 'Europe/Berlin',
      locale: localeFor('DE'),
      latitude: 52.5244,
      longitude: 13.4105,
      created_at: new Date().toISOString(),
    };
    expect(identitySchema.validate(identity).error).toBeUndefined();
  });
});

describe('waker settings', () => {
  const NO_SOCKET = '/nonexistent/docker.sock';
  function root(): string {
    const dir = tmp();
    fs.mkdirSync(path.join(dir, 'personas'));
    return dir;
  }

  test('defaults: Bright Data gateway, ipinfo.io, the default template, no account', () => {
    expect(loadWakerConfig({}, root(), NO_SOCKET).identity).toEqual({
      proxyServer: 'http://brd.superproxy.io:33335',
      usernameTemplate: '{username}-country-{country}-session-{session}',
      geoipBaseUrl: 'https://ipinfo.io',
      proxyUsername: null,
      proxyPassword: null,
      geoipToken: null,
    });
  });

  test('set values are read; the account and token stay out of the workers', () => {
    const c = loadWakerConfig(
      {
        PROXY_SERVER: 'http://gw.example:8000/',
        PROXY_USERNAME_TEMPLATE: 'u-{username}-s-{session}',
        GEOIP_BASE_URL: 'http://127.0.0.1:7000/',
        PROXY_USERNAME: 'acct',
        PROXY_PASSWORD: 'pw',
        GEOIP_TOKEN: 'tok',
      },
      root(),
      NO_SOCKET,
    );
    expect(c.identity).toEqual({
      proxyServer: 'http://gw.example:8000',
      usernameTemplate: 'u-{username}-s-{session}',
      geoipBaseUrl: 'http://127.0.0.1:7000',
      proxyUsername: 'acct',
      proxyPassword: 'pw',
      geoipToken: 'tok',
    });
    for (const k of ['PROXY_USERNAME', 'PROXY_PASSWORD', 'GEOIP_TOKEN']) {
      expect(c.workerEnv).not.toHaveProperty(k);
    }
  });

  test.each([
    ['PROXY_SERVER', 'https://gw.example:8000', 'must be an http URL'],
    ['PROXY_SERVER', 'gw.example:8000', 'must be an http URL'],
    ['GEOIP_BASE_URL', 'ipinfo.io', 'must be an http(s) URL'],
    ['PROXY_USERNAME_TEMPLATE', '{username}-country-{country}', 'must hold {session}'],
    ['PROXY_USERNAME_TEMPLATE', '{user}-{session}', 'unknown placeholder {user}'],
  ])('a bad %s (%s) is one clear error naming it', (name, value, message) => {
    const r = root();
    expect(() => loadWakerConfig({ [name]: value }, r, NO_SOCKET)).toThrow(`invalid ${name}`);
    expect(() => loadWakerConfig({ [name]: value }, r, NO_SOCKET)).toThrow(message);
  });
});
