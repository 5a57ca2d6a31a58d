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

/**
 * The brand a persona's pages claim (`BROWSER_BRAND`): `real` tells the browser's own brands
 * (a Chromium says Chromium), `google-chrome` claims Google Chrome's, as Google's build lists
 * them. A browser that already is Google Chrome keeps its own either way.
 */
export const BRAND_CLAIMS = ['real', 'google-chrome'] as const;
export type BrandClaim = (typeof BRAND_CLAIMS)[number];

/** The machine's own system as the browser tells it (client hints and navigator.platform). */
export interface RealSystem {
  navigator: string;
  hint: string;
  platformVersion: string;
  architecture: string;
  bitness: string;
  wow64: boolean;
}

/** What the real browser tells, read once from a page of its own. */
export interface RealAgent {
  userAgent: string;
  system: RealSystem;
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

/** What every page and its workers are told instead of the machine's system or brand. */
export interface PlatformOverride {
  /** The system told: the machine's own when only the brand changes. */
  name: PlatformName;
  /** The brand claimed, or null when the browser's own brands are told. */
  brand: 'Google Chrome' | null;
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

const GOOGLE_CHROME = 'Google Chrome';

/** Whether a brand list names a Google Chrome (the browser is one, or claims to be). */
export function isGoogleChrome(brands: readonly Brand[]): boolean {
  return brands.some((b) => b.brand === GOOGLE_CHROME);
}

/**
 * Google Chrome's brand list for the Chromium whose list is `own` (its GREASE entry and its
 * Chromium entry, in the order Chromium put them for its major version). Google's build adds
 * its brand with the same version, and orders the three by one of the six permutations picked
 * by the major version (`major % 6`): GREASE at `order[0]`, Chromium at `order[1]`, Google
 * Chrome at `order[2]`; a Chromium orders its two by `major % 2`. So Chrome 120 says
 * `Not_A Brand, Chromium, Google Chrome`, 124 `Chromium, Google Chrome, Not-A.Brand`, 131
 * `Google Chrome, Chromium, Not_A Brand` (as those releases sent them). Null when `own` is not
 * a Chromium's two entries.
 */
export function googleChromeBrands(own: readonly Brand[]): Brand[] | null {
  const chromium = own.find((b) => b.brand === 'Chromium');
  const grease = own.find((b) => b.brand !== 'Chromium');
  if (!chromium || !grease || own.length !== 2) return null;
  const major = Number.parseInt(chromium.version, 10);
  if (!Number.isInteger(major) || major < 0) return null;
  const ORDERS = [
    [0, 1, 2],
    [0, 2, 1],
    [1, 0, 2],
    [1, 2, 0],
    [2, 0, 1],
    [2, 1, 0],
  ] as const;
  const order = ORDERS[major % 6] ?? ORDERS[0];
  const list: Brand[] = [];
  list[order[0]] = { ...grease };
  list[order[1]] = { ...chromium };
  list[order[2]] = { brand: GOOGLE_CHROME, version: chromium.version };
  return list;
}

/**
 * The override that makes `real` tell `name` (null: the machine's own system) and claim
 * `brand`, or null when it already does (a persona that asks for its machine's own system and
 * brand is left untouched, and a Google Chrome keeps its own brands). `machine` is the system
 * the machine runs; without it, the one `real`'s User-Agent string names (a browser launched
 * with `userAgentSwitch`'s switch names the claimed one there, so its caller passes the
 * machine's). The browser and its version stay the real ones; the system changes, and the
 * brand when a Chromium claims Google Chrome's (its client hints only: the User-Agent string
 * is the same for both).
 */
export function planPlatform(
  real: RealAgent,
  name: PlatformName | null,
  brand: BrandClaim = 'real',
  machine: PlatformName | null = platformOfUserAgent(real.userAgent),
): PlatformOverride | null {
  // A browser launched with `userAgentSwitch`'s switch has emptied its full version list.
  const realFullVersionList = real.fullVersionList.length
    ? real.fullVersionList
    : fullVersionListOf(real.brands, real.fullVersion);
  const claim =
    brand === 'google-chrome' && !isGoogleChrome(real.brands)
      ? {
          brands: googleChromeBrands(real.brands),
          fullVersionList: googleChromeBrands(realFullVersionList),
        }
      : null;
  if (claim && (!claim.brands || !claim.fullVersionList)) {
    throw new Error(
      `the browser's brands are not a Chromium's, cannot claim Google Chrome: ${JSON.stringify(real.brands)}`,
    );
  }
  const systemChanges = name !== null && machine !== name;
  if (!systemChanges && !claim) return null;
  const brands = claim?.brands ?? real.brands;
  const fullVersionList = claim?.fullVersionList ?? realFullVersionList;
  const common = {
    brands,
    fullVersionList,
    fullVersion: real.fullVersion,
    model: real.model,
    mobile: real.mobile,
    formFactors: real.formFactors,
  };
  const brandTold = claim ? GOOGLE_CHROME : null;
  if (!systemChanges) {
    // The brand alone: the machine's own system, as the browser itself tells it.
    if (!machine)
      throw new Error(`the browser's system is not one this product tells: ${real.userAgent}`);
    const sys = real.system;
    return {
      name: machine,
      brand: brandTold,
      userAgent: real.userAgent,
      platform: sys.navigator,
      userAgentMetadata: {
        ...common,
        platform: sys.hint,
        platformVersion: sys.platformVersion,
        architecture: sys.architecture,
        bitness: sys.bitness,
        wow64: sys.wow64,
      },
    };
  }
  const facts = FACTS[name];
  if (!/\([^)]*\)/.test(real.userAgent)) {
    throw new Error(`the browser's user agent has no system part: ${real.userAgent}`);
  }
  return {
    name,
    brand: brandTold,
    userAgent: real.userAgent.replace(/\([^)]*\)/, `(${facts.uaToken})`),
    platform: facts.navigator,
    userAgentMetadata: {
      brands: common.brands,
      fullVersionList: common.fullVersionList,
      fullVersion: common.fullVersion,
      platform: facts.hint,
      platformVersion: facts.platformVersion,
      architecture: facts.architecture,
      model: common.model,
      mobile: common.mobile,
      bitness: facts.bitness,
      wow64: false,
      formFactors: common.formFactors,
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
