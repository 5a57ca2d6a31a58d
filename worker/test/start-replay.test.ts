import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser } from 'puppeteer-core';
import type { VirtualDisplay } from '@persona-browser/xvfb';
import { startXvfb } from '@persona-browser/xvfb';
import { browserProcess } from '../src/devtools/chromium-launcher';
import { findBrowserBinary, launchBrowser } from '../src/browser/launch';

/**
 * A browser started through a launcher script (Debian's /usr/bin/chromium reads /etc/chromium.d
 * and execs /usr/lib/chromium/chromium) is started again in the same worker, a wake from light
 * sleep, without the script: the program it exec'd, with the switches and environment it added,
 * read from the first browser. Real Chromium, a real script that counts its runs.
 */

const binary = findBrowserBinary(process.env.CHROME_PATH ?? null);
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'start-replay-'));
let display: VirtualDisplay;
const browsers: Browser[] = [];

beforeAll(async () => {
  display = await startXvfb();
});

afterAll(async () => {
  await Promise.all(browsers.map((b) => b.close().catch(() => undefined)));
  await display?.stop();
  fs.rmSync(tmp, { recursive: true, force: true });
});

/** The program behind `binary`: the one its script execs, or `binary` itself. */
function program(): string {
  const text = fs.readFileSync(binary, 'utf8').slice(0, 2);
  if (text !== '#!') return fs.realpathSync(binary);
  const debian = '/usr/lib/chromium/chromium';
  if (!fs.existsSync(debian)) throw new Error(`${binary} is a script and ${debian} is missing`);
  return debian;
}

/**
 * A launcher script as distributions write them: it adds a switch the page sees (the device
 * scale), a variable the page sees (the time zone), and notes each run in `runs`.
 */
function launcherScript(name: string, runs: string): string {
  const file = path.join(tmp, name);
  fs.writeFileSync(
    file,
    [
      '#!/bin/sh',
      `echo run >> ${runs}`,
      'export TZ=Pacific/Chatham',
      `exec ${program()} --force-device-scale-factor=1.25 "$@"`,
      '',
    ].join('\n'),
    { mode: 0o755 },
  );
  return file;
}

async function start(executablePath: string): Promise<Browser> {
  const profileDir = fs.mkdtempSync(path.join(tmp, 'profile-'));
  const browser = await launchBrowser({ executablePath, profileDir, display: display.display });
  browsers.push(browser);
  return browser;
}

/** What a page of the browser sees of the script's switch and variable (its title says). */
async function seen(browser: Browser): Promise<unknown> {
  const page = await browser.newPage();
  const script =
    'document.title = JSON.stringify({ scale: devicePixelRatio, ' +
    'zone: Intl.DateTimeFormat().resolvedOptions().timeZone })';
  await page.goto(`data:text/html,<script>${encodeURIComponent(script)}</script>`, {
    waitUntil: 'load',
  });
  const session = await page.createCDPSession();
  // The title is set before load: the history's entry has it.
  const history = await session.send('Page.getNavigationHistory');
  await session.detach();
  await page.close();
  return JSON.parse(history.entries[history.currentIndex]?.title ?? 'null');
}

function proc(browser: Browser): { file: string; environ: string[] } {
  const p = browserProcess(browser);
  if (!p?.pid) throw new Error('no browser process');
  const environ = fs.readFileSync(`/proc/${p.pid}/environ`, 'utf8').split('\0');
  return { file: p.spawnfile, environ: environ.filter(Boolean).sort() };
}

test("a second start runs the script's program directly, and the page sees what the script set", async () => {
  const runs = path.join(tmp, 'runs-a');
  const script = launcherScript('launcher-a', runs);
  const first = await start(script);
  expect(await seen(first)).toEqual({ scale: 1.25, zone: 'Pacific/Chatham' });
  const before = proc(first);
  expect(before.file).toBe(script);
  await first.close();

  const second = await start(script);
  // The script ran once: the second start is the program itself …
  expect(fs.readFileSync(runs, 'utf8')).toBe('run\n');
  const after = proc(second);
  expect(after.file).toBe(program());
  // … in the environment the script made, and its page sees the script's switch and zone.
  expect(after.environ).toEqual(before.environ);
  expect(await seen(second)).toEqual({ scale: 1.25, zone: 'Pacific/Chatham' });
});

test('control: a program started by its own path has nothing to replay, and a script whose switches Chromium would read otherwise is run every time', async () => {
  const direct = await start(program());
  expect(proc(direct).file).toBe(program());
  await direct.close();
  expect(proc(await start(program())).file).toBe(program());

  // This script changes a switch the worker gives (the window's size): not replayed.
  const runs = path.join(tmp, 'runs-b');
  const file = path.join(tmp, 'launcher-b');
  fs.writeFileSync(
    file,
    [
      '#!/bin/sh',
      `echo run >> ${runs}`,
      `exec ${program()} $(printf '%s\\n' "$@" | sed 's/^--window-size=.*/--window-size=800,600/')`,
      '',
    ].join('\n'),
    { mode: 0o755 },
  );
  const a = await start(file);
  await a.close();
  const b = await start(file);
  expect(proc(b).file).toBe(file);
  expect(fs.readFileSync(runs, 'utf8')).toBe('run\nrun\n');
});

test('the installed browser: a second start skips its launcher script and runs in the same environment', async () => {
  const first = await start(binary);
  const before = proc(first);
  await first.close();
  const second = await start(binary);
  const after = proc(second);
  expect(after.file).toBe(program());
  expect(after.environ).toEqual(before.environ);
});
