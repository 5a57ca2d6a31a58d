/**
 * A persona may tell another operating system than the machine's (`BROWSER_PLATFORM`). Every
 * surface then says the same: the User-Agent string and header, `navigator.platform` in pages
 * and every kind of worker, and the client hints with the real browser's brands and full
 * version list. All but a worker's platform through the browser's own means: its
 * `--user-agent` switch (read natively by every page and worker, shared and service ones too)
 * and DevTools' user-agent override on every target (the hints, the headers, a page's
 * platform). This file plans what to tell; `platform-browser.ts` makes the browser tell it.
 */

export const PLATFORM_NAMES = ['windows', 'macos', 'linux'] as const;
export type PlatformName = (typeof PLATFORM_NAMES)[number];

/** How a desktop Chrome of each system describes itself. */
interface PlatformFacts {
  /** The system part of the (reduced) User-Agent string, between the first parentheses. */
  uaToken: string;
  /** `navigator.platform`. */
  navigator: string;
  /** Client hints: `Sec-CH-UA-Platform` and `userAgentData.platform`. */
  hint: string;
  platformVersion: string;
  architecture: string;
  bitness: string;
}

const FACTS: Record<PlatformName, PlatformFacts> = {
  // Windows 11 24H2, 64-bit: its UA token stays "Windows NT 10.0"; only the hint tells 11.
  windows: {
    uaToken: 'Windows NT 10.0; Win64; x64',
    navigator: 'Win32',
    hint: 'Windows',
    platformVersion: '19.0.0',
    architecture: 'x86',
    bitness: '64',
  },
  // A Mac on Apple silicon: the UA token and navigator.platform still say Intel, by design.
  macos: {
    uaToken: 'Macintosh; Intel Mac OS X 10_15_7',
    navigator: 'MacIntel',
    hint: 'macOS',
    platformVersion: '15.1.0',
    architecture: 'arm',
    bitness: '64',
  },
  linux: {
    uaToken: 'X11; Linux x86_64',
    navigator: 'Linux x86_64',
    hint: 'Linux',
    platformVersion: '6.1.0',
    architecture: 'x86',
    bitness: '64',
  },
};

export interface Brand {
  brand: string;
  version: string;
}

/** What the real browser tells, read once from a page of its own. */
export interface RealAgent {
  userAgent: string;
  brands: Brand[];
  fullVersionList: Brand[];
  /** `Browser.getVersion`'s product version (`156.0.8078.79`). */
  fullVersion: string;
  mobile: boolean;
  model: string;
  formFactors: string[];
}

/** CDP's `Emulation.UserAgentMetadata`. */
export interface UserAgentMetadata {
  brands: Brand[];
  fullVersionList: Brand[];
  fullVersion: string;
  platform: string;
  platformVersion: string;
  architecture: string;
  model: string;
  mobile: boolean;
  bitness: string;
  wow64: boolean;
  formFactors: string[];
}

/** What every page and its workers are told instead of the machine's system. */
export interface PlatformOverride {
  name: PlatformName;
  userAgent: string;
  /** `navigator.platform`, in pages and workers. */
  platform: string;
  userAgentMetadata: UserAgentMetadata;
}

/** The system a User-Agent string names, or null for one this product does not tell. */
export function platformOfUserAgent(userAgent: string): PlatformName | null {
  if (/Windows NT/.test(userAgent)) return 'windows';
  if (/Macintosh/.test(userAgent)) return 'macos';
  if (/X11; Linux|Linux x86_64/.test(userAgent)) return 'linux';
  return null;
}

/** The system this machine runs, as a platform name (null for one this product does not tell). */
export function machinePlatform(os: NodeJS.Platform = process.platform): PlatformName | null {
  if (os === 'win32') return 'windows';
  if (os === 'darwin') return 'macos';
  if (os === 'linux') return 'linux';
  return null;
}

/**
 * The browser's `--user-agent` switch for `name`, from the browser's `--version` line
 * (`Chromium 156.0.8078.108 built on Debian`, `Google Chrome 156.0.8078.108`): the reduced
 * User-Agent string a desktop Chrome of that system and major version sends. Null when the
 * machine already runs `name`. The switch is the only native means that reaches the
 * `navigator.userAgent` of shared and service workers (measured: a DevTools override on their
 * own session changes their hints and headers, not that string); every page, frame and worker
 * of the browser reads it natively.
 */
export function userAgentSwitch(
  versionLine: string,
  name: PlatformName,
  machine: PlatformName | null,
): string | null {
  if (name === machine) return null;
  const major = /(\d+)\.\d+\.\d+\.\d+/.exec(versionLine)?.[1];
  if (!major) throw new Error(`cannot read the browser's version from: ${versionLine.trim()}`);
  return `Mozilla/5.0 (${FACTS[name].uaToken}) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/${major}.0.0.0 Safari/537.36`;
}

/**
 * The full version list a browser with `brands` and `fullVersion` tells, as Chromium builds it:
 * its own brands (the one of its major version) with the full version, the made-up one with
 * `.0.0.0`. A browser launched with `--user-agent` empties its high-entropy hints (the full
 * version list, architecture, bitness), so the override tells them from what it still knows.
 */
export function fullVersionListOf(brands: Brand[], fullVersion: string): Brand[] {
  const major = fullVersion.split('.')[0];
  return brands.map((b) => ({
    brand: b.brand,
    version: b.version === major ? fullVersion : `${b.version}.0.0.0`,
  }));
}

/**
 * The override that makes `real` tell `name`, or null when the machine already runs it (a
 * persona that asks for its machine's own system is left untouched). `machine` is that
 * system; without it, the one `real`'s User-Agent string names (a browser launched with
 * `userAgentSwitch`'s switch already names `name` there, so its caller passes the machine).
 * The browser, its version and its brands stay the real ones: only the system changes.
 */
export function planPlatform(
  real: RealAgent,
  name: PlatformName,
  machine: PlatformName | null = platformOfUserAgent(real.userAgent),
): PlatformOverride | null {
  if (machine === name) return null;
  const facts = FACTS[name];
  if (!/\([^)]*\)/.test(real.userAgent)) {
    throw new Error(`the browser's user agent has no system part: ${real.userAgent}`);
  }
  return {
    name,
    userAgent: real.userAgent.replace(/\([^)]*\)/, `(${facts.uaToken})`),
    platform: facts.navigator,
    userAgentMetadata: {
      brands: real.brands,
      fullVersionList: real.fullVersionList.length
        ? real.fullVersionList
        : fullVersionListOf(real.brands, real.fullVersion),
      fullVersion: real.fullVersion,
      platform: facts.hint,
      platformVersion: facts.platformVersion,
      architecture: facts.architecture,
      model: real.model,
      mobile: real.mobile,
      bitness: facts.bitness,
      wow64: false,
      formFactors: real.formFactors,
    },
  };
}

/**
 * The script run in each worker before its own code (the worker is held at its start for it):
 * it makes `navigator.platform` tell `platform`. Everything else a worker tells of its system
 * is the browser's own: its `navigator.userAgent` and `appVersion` are the browser's
 * `--user-agent` switch, its `userAgentData` and request headers a DevTools override on its
 * session. Its platform is the one surface no native means reaches (measured, Chromium 156:
 * Blink reads a worker's `navigator.platform` from the machine; neither `Emulation.` nor
 * `Network.setUserAgentOverride` on the worker's own session, sent while it is held at start,
 * nor the switch changes it).
 *
 * Three ways were measured against CreepJS, fpscanner, BotD and this product's own detector
 * page (`npm run bench:creepjs`, `worker/test/stealth-detectors.test.ts`). Left native, a Linux
 * platform beside a Windows user agent is caught by CreepJS (2 lies), fpscanner
 * (`hasMismatchPlatformWorker`, high) and the own page (`ua_consistency`). A proxy around the
 * prototype's getter (what this product did before) is caught by CreepJS alone (2 lies: the
 * wrapper's source text and its proxy behaviour). A value on the worker's own `navigator`
 * object, the prototype's getter left the browser's, is caught by none: this is it. Its tell,
 * which no detector here reads: the worker's `navigator` has an own `platform` property (a
 * native one has none), and the prototype's getter called on it still says the machine's.
 */
export function workerPlatformScript(platform: string): string {
  return `Object.defineProperty(navigator, 'platform', { configurable: true, enumerable: true, value: ${JSON.stringify(platform)} })`;
}
