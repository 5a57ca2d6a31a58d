import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import puppeteerCore from 'puppeteer-core';
import type { Browser } from 'puppeteer-core';
import { addExtra } from 'puppeteer-extra';
import StealthPlugin from 'puppeteer-extra-plugin-stealth';

const CANDIDATES = ['/usr/bin/chromium', '/usr/bin/google-chrome', '/usr/bin/chromium-browser'];

export class BrowserNotFound extends Error {}
export class ProfileInUse extends Error {}

/** `CHROME_PATH` if set, else the first installed candidate; a clear error otherwise. */
export function findBrowserBinary(chromePath: string | null): string {
  if (chromePath) {
    if (!fs.existsSync(chromePath)) {
      throw new BrowserNotFound(`CHROME_PATH=${chromePath} does not exist`);
    }
    return chromePath;
  }
  const found = CANDIDATES.find((p) => fs.existsSync(p));
  if (!found) {
    throw new BrowserNotFound(
      `no Chromium or Chrome found (looked for ${CANDIDATES.join(', ')}): ` +
        'install it with `apt-get install chromium` or set CHROME_PATH',
    );
  }
  return found;
}

/** A live process on this host; a zombie (exited, not yet reaped) counts as gone. */
function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  try {
    return !/\) Z /.test(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return true;
  }
}

/**
 * Removes `Singleton*` files left by a browser that is gone (a crash, or a profile copied from
 * another machine or container). Refuses when a live browser on this host still holds it.
 */
export function clearStaleProfileLocks(profileDir: string): void {
  const lock = path.join(profileDir, 'SingletonLock');
  let target: string | null = null;
  try {
    target = fs.readlinkSync(lock);
  } catch {
    target = null;
  }
  if (target) {
    const m = /^(.*)-(\d+)$/.exec(target);
    if (m && m[1] === os.hostname() && pidAlive(Number(m[2]))) {
      throw new ProfileInUse(`profile ${profileDir} is in use by a running browser (pid ${m[2]})`);
    }
  }
  for (const name of ['SingletonLock', 'SingletonSocket', 'SingletonCookie']) {
    fs.rmSync(path.join(profileDir, name), { force: true });
  }
}

export const WINDOW = { width: 1920, height: 1080 };

export function chromiumArgs(): string[] {
  return [
    // Start-up connections to Google's services are refused on closed networks, many times over.
    '--disable-background-networking',
    '--disable-component-update',
    '--no-first-run',
    '--no-default-browser-check',
    '--disable-sync',
    '--password-store=basic',
    '--use-mock-keychain',
    // Every pooled page keeps working while another tab is in front.
    '--disable-background-timer-throttling',
    '--disable-backgrounding-occluded-windows',
    '--disable-renderer-backgrounding',
    '--disable-features=Translate,MediaRouter,OptimizationHints,SpareRendererForSitePerProcess',
    // Xvfb has no GPU: software compositing without a GPU process saves ~40 MB (npm run bench).
    '--disable-gpu',
    '--disable-dev-shm-usage',
    `--window-size=${WINDOW.width},${WINDOW.height}`,
    '--window-position=0,0',
    '--start-maximized',
  ];
}

export interface LaunchOptions {
  executablePath: string;
  profileDir: string;
  display: string | null;
}

/** A headed Chromium on the persona's persistent profile, with the stealth evasions. */
export async function launchBrowser(opts: LaunchOptions): Promise<Browser> {
  fs.mkdirSync(opts.profileDir, { recursive: true });
  clearStaleProfileLocks(opts.profileDir);
  const puppeteer = addExtra(puppeteerCore);
  puppeteer.use(StealthPlugin());
  const args = chromiumArgs();
  // Chromium refuses to run as root without it; a container's root is the common case.
  if (typeof process.getuid === 'function' && process.getuid() === 0) args.push('--no-sandbox');
  const env = { ...process.env };
  if (opts.display) env.DISPLAY = opts.display;
  const browser = (await puppeteer.launch({
    executablePath: opts.executablePath,
    headless: false,
    userDataDir: opts.profileDir,
    defaultViewport: null,
    args,
    ignoreDefaultArgs: ['--enable-automation'],
    env,
    handleSIGINT: false,
    handleSIGTERM: false,
    handleSIGHUP: false,
    protocolTimeout: 120_000,
  })) as unknown as Browser;
  return browser;
}
