/**
 * A persona may tell another operating system than the machine's (`BROWSER_PLATFORM`). Every
 * surface then says the same: the User-Agent string and header, `navigator.platform` in pages
 * and dedicated workers, and the client hints with the real browser's brands and full version
 * list. This file plans what to tell; `platform-browser.ts` makes the browser tell it.
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
  /** `navigator.platform`, in pages and dedicated workers. */
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
 * brand is left untouched, and a Google Chrome keeps its own brands). The browser and its
 * version stay the real ones; the system changes, and the brand when a Chromium claims Google
 * Chrome's (its client hints only: the User-Agent string is the same for both).
 */
export function planPlatform(
  real: RealAgent,
  name: PlatformName | null,
  brand: BrandClaim = 'real',
): PlatformOverride | null {
  const own = platformOfUserAgent(real.userAgent);
  const claim =
    brand === 'google-chrome' && !isGoogleChrome(real.brands)
      ? {
          brands: googleChromeBrands(real.brands),
          fullVersionList: googleChromeBrands(real.fullVersionList),
        }
      : null;
  if (claim && (!claim.brands || !claim.fullVersionList)) {
    throw new Error(
      `the browser's brands are not a Chromium's, cannot claim Google Chrome: ${JSON.stringify(real.brands)}`,
    );
  }
  const systemChanges = name !== null && own !== name;
  if (!systemChanges && !claim) return null;
  const brands = claim?.brands ?? real.brands;
  const fullVersionList = claim?.fullVersionList ?? real.fullVersionList;
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
    if (!own)
      throw new Error(`the browser's system is not one this product tells: ${real.userAgent}`);
    const sys = real.system;
    return {
      name: own,
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
 * The script run in each worker before its own code (the worker is held at its start for it).
 * No DevTools command reaches a worker's `navigator.platform` (measured, Chromium 156:
 * `Emulation.` and `Network.setUserAgentOverride` on the worker's own session change its
 * client hints and request headers, never its platform), nor a shared or service worker's
 * `navigator.userAgent`; so those getters are wrapped (`userAgent` only when given, with
 * `appVersion`, which is the same string without its `Mozilla/`). Each wrapper calls the
 * native getter first, so a call on a foreign receiver still throws the browser's own
 * TypeError, and keeps its name and length; its source text reads
 * `function () { [native code] }` where the native one names itself, which a detector that
 * compares getter sources can see.
 */
export function workerPlatformScript(platform: string, userAgent: string | null = null): string {
  const values: Record<string, string> = { platform };
  if (userAgent) {
    values.userAgent = userAgent;
    values.appVersion = userAgent.replace(/^Mozilla\//, '');
  }
  return `(() => {
  const proto = Object.getPrototypeOf(navigator);
  for (const [name, value] of Object.entries(${JSON.stringify(values)})) {
    const d = Object.getOwnPropertyDescriptor(proto, name);
    if (!d || typeof d.get !== 'function') continue;
    const get = new Proxy(d.get, { apply: (target, self, args) => (Reflect.apply(target, self, args), value) });
    Object.defineProperty(proto, name, { ...d, get });
  }
})()`;
}
