import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConfigError, parseEnvFile } from '@persona-browser/service-kit';
import { loadConfig } from '../src/config';

function repo(files: Record<string, string>): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-config-'));
  for (const [name, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, name)), { recursive: true });
    fs.writeFileSync(path.join(root, name), text);
  }
  return root;
}

describe('environment files', () => {
  test('parses comments, export, quotes and trailing comments', () => {
    expect(
      parseEnvFile('# c\nexport A=1\nB="two words"\nC=\'x#y\'\nD=3 # note\n\nnot a line\nE=\n'),
    ).toEqual({ A: '1', B: 'two words', C: 'x#y', D: '3', E: '' });
  });

  test('defaults match docs/api.md when nothing is set', () => {
    const root = repo({});
    const c = loadConfig({}, root);
    expect(c).toMatchObject({
      host: '0.0.0.0',
      port: 5000,
      serviceKey: null,
      personaDir: null,
      profileDir: path.join(root, 'browser-profile'),
      slowmoMs: 200,
      wakerUrl: 'http://127.0.0.1:4900',
      dataDir: root,
      allowFileUrls: false,
      // docs/api.md: a call waits 30 s for its page (409), a navigation pauses about 2 s, then
      // gives up at 60 s (408).
      timing: {
        lockWaitMs: 30_000,
        navigationTimeoutMs: 60_000,
        callDeadlineMs: 120_000,
        navigatePauseMs: 2_000,
      },
    });
  });

  test('.env, then PERSONA_DIR/persona.env on top, then the process environment', () => {
    const root = repo({
      '.env':
        'SERVICE_KEY=from-dotenv\nBROWSER_SLOWMO=10\nPORT=5100\nPERSONA_DIR=personas/ann\nWAKER_PORT=4999\n',
      'personas/ann/persona.env': 'BROWSER_SLOWMO=20\nPORT=5101\n',
    });
    const c = loadConfig({ PORT: '5102' }, root);
    expect(c.serviceKey).toBe('from-dotenv');
    expect(c.slowmoMs).toBe(20);
    expect(c.port).toBe(5102);
    expect(c.personaDir).toBe(path.join(root, 'personas/ann'));
    expect(c.profileDir).toBe(path.join(root, 'personas/ann/profile'));
    expect(c.dataDir).toBe(c.personaDir);
    expect(c.wakerUrl).toBe('http://127.0.0.1:4999');
    expect(c.personaName).toBe('ann');
  });

  test('PERSONA_NAME names the persona when its folder is mounted under another name', () => {
    const root = repo({ 'persona/persona.env': '' });
    expect(loadConfig({ PERSONA_DIR: 'persona', PERSONA_NAME: 'alice' }, root).personaName).toBe(
      'alice',
    );
    expect(loadConfig({ PERSONA_NAME: 'alice' }, root).personaName).toBeNull();
  });

  test.each([
    ['PORT', 'abc'],
    ['PORT', '70000'],
    ['BROWSER_SLOWMO', '-1'],
    ['WAKER_PORT', '0'],
    ['WAKER_URL', 'ftp://x'],
    ['ALLOW_FILE_URLS', 'perhaps'],
    ['VNC_PORT', 'x'],
    ['LIVE_CONTROL_GRACE_SECONDS', '-1'],
    ['LIVE_CONTROL_LEASE_SECONDS', '0'],
    ['BROWSER_TIMEZONE', 'Mars/Olympus'],
    ['BROWSER_LOCALE', 'german'],
    ['BROWSER_PLATFORM', 'Win32'],
    ['NAVIGATE_PAUSE_MS', '-1'],
    ['NAVIGATE_PAUSE_MS', 'soon'],
    ['NAVIGATE_PAUSE_MS', '60001'],
    ['NAVIGATE_PAUSE_MS', '1.5'],
  ])('a bad %s=%s is refused with a message naming it', (name, value) => {
    const root = repo({});
    expect(() => loadConfig({ [name]: value }, root)).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value }, root)).toThrow(new RegExp(`^invalid ${name}: `));
  });

  test('REPO_ROOT moves the repository root: .env, profile and request log follow it', () => {
    const elsewhere = repo({ '.env': 'BROWSER_SLOWMO=7\n' });
    const c = loadConfig({ REPO_ROOT: elsewhere }, repo({ '.env': 'BROWSER_SLOWMO=9\n' }));
    expect(c).toMatchObject({
      repoRoot: elsewhere,
      slowmoMs: 7,
      profileDir: path.join(elsewhere, 'browser-profile'),
      dataDir: elsewhere,
    });
  });

  test('settings of the fleet are left to the fleet', () => {
    // The supervisor and the waker validate these; a worker sharing their .env starts anyway.
    const c = loadConfig({ HEALTH_TIMEOUT: 'soon', UPDATE_INTERVAL: 'x' }, repo({}));
    expect(c.port).toBe(5000);
  });

  test('BROWSER_TIMEZONE and BROWSER_LOCALE: a known zone and a locale, else the machine’s', () => {
    const root = repo({});
    expect(loadConfig({}, root)).toMatchObject({ browserTimezone: null, browserLocale: null });
    expect(
      loadConfig({ BROWSER_TIMEZONE: 'Europe/Berlin', BROWSER_LOCALE: 'de-DE' }, root),
    ).toMatchObject({ browserTimezone: 'Europe/Berlin', browserLocale: 'de-DE' });
  });

  test('DEVTOOLS_QUIET_RUNTIME: on unless turned off, a boolean', () => {
    const root = repo({});
    expect(loadConfig({}, root).devtoolsQuietRuntime).toBe(true);
    expect(loadConfig({ DEVTOOLS_QUIET_RUNTIME: 'false' }, root).devtoolsQuietRuntime).toBe(false);
    expect(() => loadConfig({ DEVTOOLS_QUIET_RUNTIME: 'sometimes' }, root)).toThrow(
      'invalid DEVTOOLS_QUIET_RUNTIME: "DEVTOOLS_QUIET_RUNTIME" must be a boolean',
    );
  });

  test('BROWSER_PLATFORM: windows, macos or linux, else the machine’s own', () => {
    const root = repo({});
    expect(loadConfig({}, root).browserPlatform).toBeNull();
    expect(loadConfig({ BROWSER_PLATFORM: 'windows' }, root).browserPlatform).toBe('windows');
    expect(() => loadConfig({ BROWSER_PLATFORM: 'android' }, root)).toThrow(
      'invalid BROWSER_PLATFORM: "BROWSER_PLATFORM" must be one of windows, macos, linux',
    );
  });

  test('BROWSER_BRAND: the browser’s own (real) unless google-chrome is claimed', () => {
    const root = repo({});
    expect(loadConfig({}, root).browserBrand).toBe('real');
    expect(loadConfig({ BROWSER_BRAND: '' }, root).browserBrand).toBe('real');
    expect(loadConfig({ BROWSER_BRAND: 'google-chrome' }, root).browserBrand).toBe('google-chrome');
    expect(() => loadConfig({ BROWSER_BRAND: 'edge' }, root)).toThrow(
      'invalid BROWSER_BRAND: "BROWSER_BRAND" must be one of real, google-chrome',
    );
  });

  test('RECORDING: off unless turned on (persona.env reaches it); frames, days and cap checked', () => {
    const root = repo({ 'p/persona.env': 'RECORDING=true\nRECORDING_FPS=4\n' });
    expect(loadConfig({}, root).recording).toBeNull();
    expect(loadConfig({ PERSONA_DIR: path.join(root, 'p') }, root).recording).toEqual({
      calls: true,
      leases: false,
      fps: 4,
      retentionMs: 3 * 86_400_000,
      capBytes: 200 * 1024 * 1024,
    });
    // RECORDING_LEASES alone: leases recorded, plugin calls not.
    expect(loadConfig({ RECORDING_LEASES: 'true' }, root).recording).toMatchObject({
      calls: false,
      leases: true,
    });
    expect(() => loadConfig({ RECORDING_LEASES: 'sometimes' }, root)).toThrow(
      /invalid RECORDING_LEASES/,
    );
    expect(() => loadConfig({ RECORDING: 'true', RECORDING_FPS: '30' }, root)).toThrow(
      'invalid RECORDING_FPS: "RECORDING_FPS" must be less than or equal to 10',
    );
    expect(() => loadConfig({ RECORDING_CAP_MB: '-1' }, root)).toThrow(/invalid RECORDING_CAP_MB/);
  });

  test('NAVIGATE_PAUSE_MS: 2000 unless set; 0 drops the pause; persona.env over .env', () => {
    const root = repo({
      '.env': 'NAVIGATE_PAUSE_MS=500\n',
      'p/persona.env': 'NAVIGATE_PAUSE_MS=0\n',
    });
    expect(loadConfig({}, repo({})).timing.navigatePauseMs).toBe(2_000);
    expect(loadConfig({}, root).timing.navigatePauseMs).toBe(500);
    expect(loadConfig({ PERSONA_DIR: path.join(root, 'p') }, root).timing.navigatePauseMs).toBe(0);
    expect(loadConfig({ NAVIGATE_PAUSE_MS: '60000' }, root).timing.navigatePauseMs).toBe(60_000);
    expect(() => loadConfig({ NAVIGATE_PAUSE_MS: '-5' }, root)).toThrow(
      'invalid NAVIGATE_PAUSE_MS: "NAVIGATE_PAUSE_MS" must be greater than or equal to 0',
    );
    expect(() => loadConfig({ NAVIGATE_PAUSE_MS: '2s' }, root)).toThrow(
      'invalid NAVIGATE_PAUSE_MS: "NAVIGATE_PAUSE_MS" must be a number',
    );
    expect(() => loadConfig({ NAVIGATE_PAUSE_MS: '3600000' }, root)).toThrow(
      'invalid NAVIGATE_PAUSE_MS: "NAVIGATE_PAUSE_MS" must be less than or equal to 60000',
    );
  });

  test('a missing persona folder is named', () => {
    const root = repo({});
    expect(() => loadConfig({ PERSONA_DIR: 'nope' }, root)).toThrow(
      /invalid PERSONA_DIR: .*does not exist/,
    );
  });

  test('an empty value counts as unset', () => {
    const root = repo({});
    expect(loadConfig({ SERVICE_KEY: '', PERSONA_DIR: '' }, root)).toMatchObject({
      serviceKey: null,
      personaDir: null,
    });
  });
});
