import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT } from '@persona-browser/testkit/waker';

/**
 * scripts/setup.sh as a user runs it on a server, on a scratch copy of the checkout's layout
 * (the script and a personas folder): the fleet's time zone and locale land in .env, are kept
 * on a second run, and bad ones are refused with one line, .env untouched.
 */
let dir: string;

function setup(args: string[]): { status: number | null; out: string; err: string } {
  const r = spawnSync('bash', [path.join(dir, 'scripts', 'setup.sh'), ...args], {
    encoding: 'utf8',
    // Not a terminal: the script asks nothing and takes its options.
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return { status: r.status, out: r.stdout, err: r.stderr };
}
const envFile = (): string => fs.readFileSync(path.join(dir, '.env'), 'utf8');

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-setup-'));
  fs.mkdirSync(path.join(dir, 'scripts'));
  fs.copyFileSync(path.join(ROOT, 'scripts', 'setup.sh'), path.join(dir, 'scripts', 'setup.sh'));
  // A persona already there: the script leaves personas/ alone.
  fs.mkdirSync(path.join(dir, 'personas', 'own'), { recursive: true });
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

test('the fleet time zone and locale go into .env beside a new key, and a second run keeps them', () => {
  const first = setup(['--timezone', 'Europe/Rome', '--locale', 'it-IT']);
  expect(first).toMatchObject({ status: 0 });
  expect(first.out).toContain('pages are told the time zone Europe/Rome');
  expect(envFile()).toMatch(
    /^SERVICE_KEY=[0-9a-f]{48}\nBROWSER_TIMEZONE=Europe\/Rome\nBROWSER_LOCALE=it-IT\n$/,
  );
  const before = envFile();
  expect(setup(['--timezone', 'Asia/Tokyo', '--locale', 'ja-JP'])).toMatchObject({ status: 0 });
  expect(envFile()).toBe(before);
});

test('without them (and no terminal to ask at) it says personas will tell the server zone', () => {
  const r = setup([]);
  expect(r.status).toBe(0);
  expect(r.err).toContain('no time zone set');
  expect(envFile()).not.toContain('BROWSER_TIMEZONE');
});

test('an unknown zone or a malformed locale is refused with one line naming it', () => {
  const zone = setup(['--timezone', 'Mars/Olympus']);
  expect(zone.status).toBe(2);
  expect(zone.err.trim()).toBe(
    'setup: unknown time zone Mars/Olympus (see /usr/share/zoneinfo, e.g. Europe/Rome)',
  );
  expect(envFile()).not.toContain('BROWSER_TIMEZONE');
  const trick = setup(['--timezone', '../../etc/passwd']);
  expect(trick.status).toBe(2);
  const locale = setup(['--timezone', 'Europe/Rome', '--locale', 'italian']);
  expect(locale.status).toBe(2);
  expect(locale.err).toContain('such as it-IT or en-US (got italian)');
  expect(envFile()).not.toContain('BROWSER_LOCALE');
});
